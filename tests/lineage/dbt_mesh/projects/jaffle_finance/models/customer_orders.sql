select * from {{ ref('jaffle_platform', 'stg_orders') }}
