{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'source_name', 'source_table', 'key_json'],
        merge_deletes_flagged_rows=true,
        partition_by=['key_cohort'],
        tblproperties={'delta.enableDeletionVectors': 'true'},
        pre_hook="{{ mark_applied_through(applied_through(ref('int_cdc__key_states'))) }}",
        post_hook="{{ unmark_applied_through() }}",
    )
}}

{#- One row per live key: its last state, from int_cdc__key_states. A run merges the keys
    changed since this table's own mark: a live key's row is written, a key with no open
    version any more is deleted, other keys are not touched (docs/decisions/006, 011). -#}
{%- set applied = applied_through(this) if is_incremental() else none %}
{%- set applied = -1 if applied is none else applied %}
{%- set changed_cohorts = distinct_values(
    ref('int_cdc__key_states'), 'key_cohort', 'batch_run > ' ~ applied
) if is_incremental() else [] %}

{{ merge_only_into_partitions('key_cohort', changed_cohorts) }}
with changed_keys as (
    select * from {{ ref('int_cdc__key_states') }}
    where batch_run > {{ applied }}
),

open_versions as (
    select
        changed_keys.source_system,
        changed_keys.source_name,
        changed_keys.source_table,
        changed_keys.key_json,
        changed_keys.last_transition.row_json,
        changed_keys.last_transition.unavailable_columns,
        changed_keys.last_transition.op as last_op,
        changed_keys.last_transition.committed_at as last_committed_at,
        changed_keys.last_transition.sort_key,
        changed_keys.max_landing_run as last_landing_run,
        changed_keys.key_cohort
    from changed_keys
    where not changed_keys.last_transition.is_delete
),

{%- if is_incremental() %}

    closed_keys as (
        -- Changed keys left with no open version: deleted, or truncated away.
        select
            changed_keys.source_system,
            changed_keys.source_name,
            changed_keys.source_table,
            changed_keys.key_json,
            cast(null as string) as row_json,
            cast(null as array<string>) as unavailable_columns,
            cast(null as string) as last_op,
            cast(null as timestamp) as last_committed_at,
            cast(null as string) as sort_key,
            cast(null as bigint) as last_landing_run,
            changed_keys.key_cohort
        from changed_keys
        where coalesce(changed_keys.last_transition.is_delete, true)
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
