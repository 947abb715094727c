{#- Each key gets a partition (key_cohort) for life. A partition holds keys of one source table
    only, grouped by when they were first seen: recent activity stays in its table's recent
    partitions, so a run reads few of them, and a query of one table reads only its own
    (docs/decisions/002-key-cohort-partitions.md, 006-delta-lake.md, 017-table-cohorts.md). -#}
{%- set seen_through = landing_runs_processed('first_landing_run') %}

with new_changes as (
    -- Only the families this build processes have changes since the last build.
    select * from {{ ref('int_cdc__source_changes') }}
    where landing_run > {{ seen_through }} and {{ built_families_filter('source_system') }}
),

new_keys as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        min(landing_run) as first_landing_run
    from new_changes
    group by source_system, source_name, source_table, key_json
),

{%- if is_incremental() %}

    registered_keys as (
        select * from {{ this }}
    ),

    unregistered_keys as (
        select new_keys.*
        from new_keys
        left anti join registered_keys
            on
                {{ same_key('new_keys', 'registered_keys') }}
    ),

    numbered_before as (
        -- How many keys each table has numbered already. Not narrowed to the tables with new
        -- keys: a second reference to unregistered_keys would have Spark compute them twice.
        select
            source_system,
            source_table,
            max(key_seq) as last_key_seq
        from registered_keys
        group by source_system, source_table
    ),
{%- else %}

    unregistered_keys as (
        select * from new_keys
    ),

    numbered_before as (
        select
            cast(null as string) as source_system,
            cast(null as string) as source_table,
            cast(null as bigint) as last_key_seq
        where false
    ),
{%- endif %}

numbered_keys as (
    -- Keys are numbered per source table (its streams together), in first-seen order.
    select
        unregistered_keys.*,
        coalesce(numbered_before.last_key_seq, 0) + row_number() over (
            partition by unregistered_keys.source_system, unregistered_keys.source_table
            order by
                unregistered_keys.first_landing_run,
                unregistered_keys.source_name,
                unregistered_keys.key_json
        ) as key_seq
    from unregistered_keys
    left join numbered_before
        on
            unregistered_keys.source_system = numbered_before.source_system
            and unregistered_keys.source_table = numbered_before.source_table
),

final as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        first_landing_run,
        key_seq,
        cast(
            {{ table_bucket('source_system', 'source_table') }} * {{ cohorts_per_table() }}
            + least(
                floor((key_seq - 1) / {{ var('cdc_keys_per_partition') }}),
                {{ cohorts_per_table() }} - 1
            ) as int
        ) as key_cohort
    from numbered_keys
)

select * from final
