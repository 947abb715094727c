{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['key_cohort'],
    )
}}

{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with new_changes as (
    select * from {{ ref('int_cdc__source_changes') }}
    where landing_run > {{ processed_through }}
),

key_registry as (
    select * from {{ ref('int_cdc__key_registry') }}
),

final as (
    select
        new_changes.*,
        key_registry.key_cohort
    from new_changes
    inner join key_registry
        on
            new_changes.source_system = key_registry.source_system
            and new_changes.source_name = key_registry.source_name
            and new_changes.source_table = key_registry.source_table
            and new_changes.key_json = key_registry.key_json
)

select * from final
