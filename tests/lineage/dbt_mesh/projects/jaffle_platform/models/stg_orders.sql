select 1 as order_id, 10 as customer_id, 'SAVE10' as discount_code, 25.0 as amount, current_date as ordered_at
