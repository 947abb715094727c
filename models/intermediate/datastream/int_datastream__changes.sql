{{ config(materialized='view') }}

with events as (
    select * from {{ ref('int_datastream__events') }}
),

final as (
    {{ keyed_changes('events', 'datastream') }}
)

select * from final
