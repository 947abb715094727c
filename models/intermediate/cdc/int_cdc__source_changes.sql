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
    -- Each branch names its columns: a union matches columns by position.
    select
        {{ change_log_select('datastream_changes') }}
    from datastream_changes
    union all
    select
        {{ change_log_select('debezium_changes') }}
    from debezium_changes
    union all
    select
        {{ change_log_select('pgoutput_changes') }}
    from pgoutput_changes
    union all
    select
        {{ change_log_select('spanner_changes') }}
    from spanner_changes
)

select * from final
