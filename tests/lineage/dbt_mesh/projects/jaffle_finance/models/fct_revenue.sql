select
    o.customer_id,
    sum(o.amount) as revenue
from {{ ref('jaffle_platform', 'stg_orders') }} as o
where o.discount_code is null
group by o.customer_id
