{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'source_name', 'source_table', 'key_json', 'sort_key'],
        merge_deletes_flagged_rows=true,
        partition_by=['key_cohort'],
        tblproperties={'delta.enableDeletionVectors': 'true'},
        pre_hook="{{ mark_applied_through(applied_through(ref('int_cdc__key_states'))) }}",
        post_hook="{{ unmark_applied_through() }}",
    )
}}

{#- One row per version of a key. int_cdc__key_states builds the versions; a run merges those its
    changed keys wrote since this table's own mark: new and changed versions are written, a
    recomputed key's versions that no longer exist are deleted, other rows are not touched
    (docs/decisions/006, 011). A full build writes every key's versions, which the key states
    hold only after their own full build. -#}
{%- set key_states = ref('int_cdc__key_states') %}
{%- set applied = applied_through(this) if is_incremental() else none %}
{%- set applied = -1 if applied is none else applied %}
{%- if not is_incremental() and execute
    and applied_through(key_states, 'applied_from') not in [-1, none] %}
    {{ exceptions.raise_compiler_error(
        'cdc_history is built whole only from key states built whole: run '
        ~ '`cdcw dbt build --full-refresh --select int_cdc__key_states+`'
    ) }}
{%- endif %}
{%- set written_cohorts = distinct_values(
    key_states, 'key_cohort', 'batch_run > ' ~ applied
) if is_incremental() else [] %}
{%- set recomputed_cohorts = distinct_values(
    key_states, 'key_cohort', 'batch_run > ' ~ applied ~ ' and is_recomputed'
) if is_incremental() else [] %}

{{ merge_only_into_partitions('key_cohort', written_cohorts) }}
with changed_keys as (
    select * from {{ key_states }}
    where batch_run > {{ applied }}
),

written_versions as (
    select
        changed_keys.source_system,
        changed_keys.source_name,
        changed_keys.source_table,
        changed_keys.key_json,
        version.row_json,
        version.unavailable_columns,
        version.op,
        version.valid_from,
        version.valid_to,
        version.is_current,
        version.closed_by_delete,
        version.sort_key,
        version.committed_at,
        version.last_landing_run,
        changed_keys.key_cohort
    from changed_keys
        lateral view explode(changed_keys.versions) written as version
),

{%- if is_incremental() %}

    changed_versions as (
        -- A recomputed key's versions that no run since this table's mark can have changed are
        -- as they were.
        select * from written_versions
        where last_landing_run > {{ applied }}
    ),

    recomputed_keys as (
        select
            source_system,
            source_name,
            source_table,
            key_json
        from changed_keys
        where is_recomputed
    ),

    removed_versions as (
        -- Versions of the recomputed keys that their recomputation no longer has (their keys
        -- are what the merge deletes by).
        select
            previous.source_system,
            previous.source_name,
            previous.source_table,
            previous.key_json,
            cast(null as string) as row_json,
            cast(null as array<string>) as unavailable_columns,
            cast(null as string) as op,
            cast(null as timestamp) as valid_from,
            cast(null as timestamp) as valid_to,
            cast(null as boolean) as is_current,
            cast(null as boolean) as closed_by_delete,
            previous.sort_key,
            cast(null as timestamp) as committed_at,
            cast(null as bigint) as last_landing_run,
            previous.key_cohort
        from {{ this }} as previous
        left semi join recomputed_keys
            on {{ same_key('previous', 'recomputed_keys') }}
        left anti join written_versions
            on
                {{ same_key('previous', 'written_versions') }}
                and previous.sort_key = written_versions.sort_key
        where {{ in_values('previous.key_cohort', recomputed_cohorts) }}
    ),

    final as (
        {{ flag_removed_rows('changed_versions', 'removed_versions') }}
    )
{%- else %}

    final as (
        select {{ write_clustered_by('key_cohort') }} * from written_versions
    )
{%- endif %}

select * from final
