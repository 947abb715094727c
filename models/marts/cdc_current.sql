{%- if is_incremental() %}
    {%- set touched = touched_current_cohorts() %}
{%- endif %}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_cohort'],
        pre_hook="{{ drop_emptied_current_partitions() }}",
    )
}}

{#- A run rewrites the partitions that hold a key cdc_history recomputed, straight from
    history's open versions there (docs/decisions/003): each rewritten partition is what a full
    refresh writes, and no join with this table's old rows is needed. Reading history's rows of
    those partitions measured cheaper than carrying this table's other rows through an anti join
    (docs/benchmarks.md item 40). -#}

with open_versions as (
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
    from {{ ref('cdc_history') }}
    where
        is_current
        {%- if is_incremental() %}
            and {{ in_values('key_cohort', touched) }}
        {%- endif %}
),

final as (
    select {{ write_clustered_by('key_cohort') }} * from open_versions
)

select * from final
