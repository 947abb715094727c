{%- set touched = touched_cohorts(ref('cdc_history'), 'last_landing_run') if is_incremental() %}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_cohort'],
        pre_hook="{{ drop_emptied_current_partitions() }}",
    )
}}

with open_versions as (
    select * from {{ ref('cdc_history') }}
    where
        is_current
        {%- if is_incremental() %}
            and {{ in_values('key_cohort', touched) }}
        {%- endif %}
),

final as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        row_json,
        unavailable_columns,
        op as last_op,
        committed_at as last_committed_at,
        sort_key,
        last_landing_run,
        key_cohort
    from open_versions
)

select * from final
