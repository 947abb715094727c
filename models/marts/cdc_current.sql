{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'source_name', 'source_table', 'key_json'],
        merge_deletes_flagged_rows=true,
        partition_by=['key_cohort'],
        tblproperties={'delta.enableDeletionVectors': 'true'},
        post_hook=[
            "{{ row_rules_constraint(
                'current_rows_hold_their_values',
                not_null=[
                    'source_system', 'source_name', 'source_table', 'key_json', 'row_json',
                    'unavailable_columns', 'last_op', 'last_committed_at', 'sort_key',
                ],
            ) }}",
            "{{ unrecord_watermark() }}",
        ],
    )
}}

{#- A run merges the open versions of the keys cdc_history recomputed (their rows there carry a
    newer last_landing_run than this table reflects): a live key's row is written, a key with no
    open version any more is deleted, other keys are not touched (docs/decisions/006). -#}
{%- set processed_through = mart_watermark(this, 'last_landing_run') if is_incremental() else -1 %}
{#- It reads every row of cdc_history it has not processed, so it processes what that has. -#}
{%- do record_watermark(mart_watermark(ref('cdc_history'), 'last_landing_run')) %}
{%- set touched = distinct_values(
    ref('cdc_history'), 'key_cohort', 'last_landing_run > ' ~ processed_through
) if is_incremental() else [] %}

{{ merge_only_into_partitions('key_cohort', touched) }}
with recomputed_versions as (
    select * from {{ ref('cdc_history') }}
    where last_landing_run > {{ processed_through }}
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

    closed_keys as (
        -- Recomputed keys left with no open version: deleted, or truncated away.
        select distinct
            source_system,
            source_name,
            source_table,
            key_json,
            cast(null as string) as row_json,
            cast(null as array<string>) as unavailable_columns,
            cast(null as string) as last_op,
            cast(null as timestamp) as last_committed_at,
            cast(null as string) as sort_key,
            cast(null as bigint) as last_landing_run,
            key_cohort
        from recomputed_versions
        where not exists (
            select 1 from open_versions
            where {{ same_key('open_versions', 'recomputed_versions') }}
        )
    ),

    final as (
        {{ flag_removed_rows('open_versions', 'closed_keys') }}
    )
{%- else %}

    final as (
        select {{ write_clustered_by('key_cohort') }} * from open_versions
    )
{%- endif %}

select * from final
