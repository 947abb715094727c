{{ config(materialized='view') }}

{#- Every source family's changes in the one shape of docs/decisions/001; a new family adds
    its int_<family>__changes model to this union and nothing downstream changes. -#}
with datastream_changes as (
    select * from {{ ref('int_datastream__changes') }}
),

debezium_changes as (
    select * from {{ ref('int_debezium__changes') }}
),

pgoutput_changes as (
    {{ keyed_changes(ref('int_pgoutput__changes'), 'pgoutput') }}
),

spanner_changes as (
    {{ keyed_changes(ref('int_spanner__changes'), 'spanner') }}
),

final as (
    select * from datastream_changes
    union all
    select * from debezium_changes
    union all
    select * from pgoutput_changes
    union all
    select * from spanner_changes
)

select * from final
