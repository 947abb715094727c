{%- if is_incremental() %}
    {%- set processed_through = max_processed(this, 'last_landing_run') %}
    {%- set touched = touched_cohorts(
        ref('cdc_history'), 'last_landing_run', processed_through
    ) %}
    {%- set recomputed_filter = 'last_landing_run > ' ~ processed_through ~ ' and '
        ~ in_values('key_cohort', touched) %}
    {%- set recomputed_hint = broadcast_hint(
        'recomputed_versions', count_rows(ref('cdc_history'), recomputed_filter)
    ) %}
{%- endif %}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_cohort'],
        pre_hook="{{ drop_emptied_current_partitions() }}",
    )
}}

{#- A run takes the open versions of the keys cdc_history recomputed and keeps the other rows of
    the partitions it rewrites (docs/decisions/003): recomputed history rows are newer than
    anything this table reflects, and sit in their own files, so their scan skips the rest. -#}

with recomputed_versions as (
    select * from {{ ref('cdc_history') }}
    {%- if is_incremental() %}
        where {{ recomputed_filter }}
    {%- endif %}
),

open_versions as (
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
    from recomputed_versions
    where is_current
),

{%- if is_incremental() %}

    carried_rows as (
        select previous.*
        from {{ this }} as previous
        where
            {{ in_values('previous.key_cohort', touched) }}
            and not exists (
                select {{ recomputed_hint }} 1 from recomputed_versions
                where
                    {{ same_key('recomputed_versions', 'previous') }}
            )
    ),
{%- endif %}

current_rows as (
    select * from open_versions
    {%- if is_incremental() %}
        union all
        select * from carried_rows
    {%- endif %}
),

final as (
    select {{ write_clustered_by('key_cohort') }} * from current_rows
)

select * from final
