{{
    config(
        partition_by=['key_cohort'],
    )
}}

{%- set processed_through = landing_runs_processed() %}

with new_changes as (
    -- Only the families this build processes have changes since the last build.
    select * from {{ ref('int_cdc__source_changes') }}
    where landing_run > {{ processed_through }} and {{ built_families_filter('source_system') }}
),

key_registry as (
    select * from {{ ref('int_cdc__key_registry') }}
),

final as (
    {#- image_has_unknown_values, whether the row image leaves a column unknown (an unchanged
        TOAST value, a partial image), is stored so that readers which only ask this skip the
        images: key successions, history. #}
    select {{ write_clustered_by('key_cohort') }}
        {{ change_log_select('new_changes', {
            'image_has_unknown_values': 'exists(map_values(new_changes.row_image), v -> v is null)',
            'key_cohort': 'key_registry.key_cohort',
        }, stored=true) }}
    from new_changes
    inner join key_registry
        on
            {{ same_key('new_changes', 'key_registry') }}
)

select * from final
