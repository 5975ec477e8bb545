select ordered_at, count(*) as orders
from {{ ref('jaffle_platform', 'stg_orders') }}
group by ordered_at
