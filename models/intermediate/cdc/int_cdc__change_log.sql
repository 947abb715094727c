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
    select {{ write_clustered_by('key_cohort') }}
        new_changes.*,
        -- Stored so that readers which only ask this skip the images: key successions, history.
        {{ image_has_unknown_values('new_changes.row_image') }} as image_has_unknown_values,
        key_registry.key_cohort
    from new_changes
    inner join key_registry
        on
            {{ same_key('new_changes', 'key_registry') }}
)

select * from final
