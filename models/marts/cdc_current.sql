{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'source_name', 'source_table', 'key_json'],
        merge_deletes_flagged_rows=true,
        merge_source_holds_only_changes=true,
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
{%- set touched = [] %}
{%- if is_incremental() %}
    {%- set recomputed = 'last_landing_run > ' ~ processed_through %}
    {#- At most one row merged per recomputed version. -#}
    {%- set recomputed_version_count = count_rows(ref('cdc_history'), recomputed) %}
    {%- if recomputed_version_count > 0 %}
        {%- set touched = distinct_values(ref('cdc_history'), 'key_cohort', recomputed) %}
    {%- endif %}
{%- endif %}
{#- A run in which cdc_history rewrote no version has nothing to merge (`nothing_to_write`). -#}
{%- set nothing_changed = is_incremental() and recomputed_version_count == 0 %}

{%- if nothing_changed %}
    {{ nothing_to_write(flags_removed_rows=true) }}
{%- else %}
{{ merge_only_into_partitions('key_cohort', touched) }}
{{ broadcast_merge_source(recomputed_version_count) if is_incremental() }}
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

    flagged_rows as (
        -- The merge deletes the rows flagged is_removed (config merge_deletes_flagged_rows).
        select
            *,
            false as is_removed
        from open_versions
        union all
        select
            *,
            true as is_removed
        from closed_keys
    ),

    stored_rows as (
        -- The stored rows of the merged keys, whole: a row is compared with its stored one
        -- here, so the MERGE reads no more of the target than its key.
        select previous.*
        from {{ this }} as previous
        where
            {{ in_values('previous.key_cohort', touched) }}
            and exists (
                select {{ broadcast_hint('recomputed_versions', recomputed_version_count) }} 1
                from recomputed_versions
                where {{ same_key('recomputed_versions', 'previous') }}
            )
    ),

    merged_rows as (
        -- A live key's row is written unless it equals its stored one; a closed key's is
        -- deleted where it is stored.
        select flagged_rows.*
        from flagged_rows
        left join stored_rows
            on {{ same_key('flagged_rows', 'stored_rows') }}
        where
            case
                when flagged_rows.is_removed then stored_rows.key_json is not null
                else
                    stored_rows.key_json is null
                    or not ({{ rows_equal('flagged_rows', 'stored_rows', [
                        'row_json', 'unavailable_columns', 'last_op', 'last_committed_at',
                        'sort_key', 'last_landing_run', 'key_cohort',
                    ]) }})
            end
    ),

    final as (
        select * from merged_rows
    )
{%- else %}

    final as (
        select {{ write_clustered_by('key_cohort') }} * from open_versions
    )
{%- endif %}

select * from final
{%- endif %}
