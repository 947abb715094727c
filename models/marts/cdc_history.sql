-- depends_on: {{ ref('int_cdc__key_registry') }}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'source_name', 'source_table', 'key_json', 'sort_key'],
        merge_deletes_flagged_rows=true,
        merge_source_holds_only_changes=true,
        partition_by=['key_cohort'],
        tblproperties={'delta.enableDeletionVectors': 'true'},
        post_hook=[
            "{{ uncache_view('cdc_history__sorted_changes') }}",
            "{{ uncache_view('cdc_history__changed_keys') }}",
            "{{ row_rules_constraint(
                'history_rows_hold_their_values',
                not_null=[
                    'source_system', 'source_name', 'source_table', 'key_json', 'row_json',
                    'unavailable_columns', 'op', 'valid_from', 'is_current', 'closed_by_delete',
                    'sort_key', 'committed_at',
                ],
                accepted_values={'op': ['insert', 'update', 'snapshot']},
            ) }}",
            "{{ unrecord_watermark() }}",
        ],
    )
}}

{#- A run recomputes the history of the keys it changed, from the change log, so a late event
    takes its place, and merges their versions into the table: new and changed versions are
    written, versions that no longer exist deleted, other keys' rows not touched
    (docs/decisions/006). Two sets are computed once, before the model's query, as cached views
    (`cached_view`, docs/decisions/007): the keys to recompute, and their sorted changes, which
    the query reads four times (Spark SQL inlines a CTE at every reference). -#}
{%- set changed_keys = none %}
{%- set touched = [] %}
{%- set predecessor_cohorts = [] %}
{%- set changed_key_count = 0 %}
{%- if is_incremental() %}
    {%- set processed_through = mart_watermark(this, 'last_landing_run') %}
    {%- set new_column_condition = 'landing_run > ' ~ processed_through %}
    {#- A build without Spanner (families_in_build) has no Spanner column it has not seen. -#}
    {%- set built_families = families_in_build() %}
    {%- set spanner_built = built_families is none or 'spanner' in built_families %}
    {#- The keys whose history the run recomputes: keys with new changes, every key of a table a
        new truncate emptied, the successors of a primary key change whose half landed or whose
        old key changed (their unknown values continue the old key's), and the keys of a Spanner
        table that has a column seen for the first time; each with its partition. -#}
    {%- set changed_keys_query -%}
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ ref('int_cdc__change_log') }}
        where landing_run > {{ processed_through }}
        union
        select registry.source_system, registry.source_name, registry.source_table,
            registry.key_json, registry.key_cohort
        from {{ ref('int_cdc__key_registry') }} as registry
        inner join {{ ref('int_cdc__truncates') }} as truncates
            on
                registry.source_system = truncates.source_system
                and registry.source_name = truncates.source_name
                and registry.source_table = truncates.source_table
        where truncates.landing_run > {{ processed_through }}
        union
        select successions.source_system, successions.source_name, successions.source_table,
            successions.key_json, successions.key_cohort
        from {{ ref('int_cdc__key_successions') }} as successions
        left semi join {{ ref('int_cdc__change_log') }} as predecessor_changes
            on
                {{ same_key('successions', 'predecessor_changes', left_key='predecessor_key_json') }}
                and predecessor_changes.landing_run > {{ processed_through }}
        union
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ ref('int_cdc__key_successions') }}
        where landing_run > {{ processed_through }}
        {%- if spanner_built and count_rows(
            ref('int_spanner__table_columns'), new_column_condition
        ) | int > 0 %}
            union
            -- A Spanner table's images are completed with its columns as known when they are:
            -- a column seen for the first time counts in every earlier image of the table.
            select
                change_log.source_system,
                change_log.source_name,
                change_log.source_table,
                change_log.key_json,
                change_log.key_cohort
            from {{ ref('int_cdc__change_log') }} as change_log
            left semi join (
                select source_name, source_table
                from {{ ref('int_spanner__table_columns') }}
                where {{ new_column_condition }}
            ) as widened_tables
                on
                    change_log.source_system = 'spanner'
                    and change_log.source_name = widened_tables.source_name
                    and change_log.source_table = widened_tables.source_table
        {%- endif %}
    {%- endset %}
    {%- set changed_keys = cached_view('cdc_history__changed_keys', changed_keys_query) %}
    {%- set changed_key_count = count_rows(changed_keys, 'true') %}
    {%- if changed_key_count > 0 %}
        {%- set touched = distinct_values(changed_keys, 'key_cohort', 'true') %}
        {%- set predecessor_cohorts = distinct_values(
            ref('int_cdc__key_successions'),
            'predecessor_key_cohort',
            in_values('key_cohort', touched)
        ) %}
    {%- endif %}
{%- endif %}
{#- A run with no key to recompute has nothing to merge (`nothing_to_write`): no version of any
    key changes, so it caches, reads and merges nothing. -#}
{%- set nothing_changed = is_incremental() and changed_key_count == 0 %}
{%- set changed_keys_hint = broadcast_hint('changed_keys', changed_key_count) %}
{#- The primary key changes of the keys the run recomputes: successor and predecessor key. -#}
{%- set key_successions_query -%}
    select distinct
        successions.source_system,
        successions.source_name,
        successions.source_table,
        successions.key_json,
        successions.predecessor_key_json,
        successions.sort_pos
    from {{ ref('int_cdc__key_successions') }} as successions
    {%- if is_incremental() %}
        where
            {{ in_values('successions.key_cohort', touched) }}
            and {{ key_is_changed('successions', changed_keys, changed_keys_hint) }}
    {%- endif %}
{%- endset %}
{#- The changes of the keys the run recomputes, as the change log stores them; the
    predecessors' changes ride along as context (`is_context`). -#}
{%- set context_filter = 'false' %}
{%- set context_hint = '' %}
{%- if is_incremental() %}
    {%- set context_hint = broadcast_hint('key_successions', changed_key_count) ~ ' ' %}
    {%- set context_filter = in_values('change_log.key_cohort', predecessor_cohorts)
        ~ ' and not ' ~ key_is_changed('change_log', changed_keys, changed_keys_hint) %}
{%- endif %}
{%- set keyed_changes -%}
    select
        {{ change_log_select('change_log', stored=true, indent=12) }},
        false as is_context
    from {{ ref('int_cdc__change_log') }} as change_log
    {%- if is_incremental() %}
        where
            {{ in_values('change_log.key_cohort', touched) }}
            and {{ key_is_changed('change_log', changed_keys, changed_keys_hint) }}
    {%- endif %}
{%- endset %}
{#- Every change of the keys the run recomputes, once per event, placed in source order: where
    a family's `sort_pos` becomes `sort_key`. All windows partition by key alone, so the change
    log is shuffled once. Nested subqueries, not CTEs: Spark does not substitute a cached plan
    that holds a CTE into a query that has a WITH clause (it recomputes it). A union matches
    columns by position, so each of its branches selects the stored change-log row through
    change_log_select. -#}
{%- set sorted_changes_query -%}
    select
        *,
        concat_ws(
            '.',
            {{ position_source_time('mono_ts') }},
            case when is_backfill then '0' else '1' end,
            sort_pos,
            case when op = 'delete' then '0' else '1' end,
            event_id
        ) as sort_key,
        max(has_unknown_values) over (
            partition by source_system, source_name, source_table, key_json
        ) as key_has_unknown_values
    from (
        select
            * except (has_unknown_values, is_completed),
            has_unknown_values or (
                is_completed
                and not is_context
                and op != 'delete'
                and exists(map_values(row_image), column_value -> column_value is null)
            ) as has_unknown_values
        from (
            -- A Spanner image names the columns its record carries: the table's others, as known
            -- when this runs, are there with no value, for the key's earlier changes to complete.
            -- Every change of the table then reflects the run that brought the newest of them.
            select /*+ broadcast(table_columns) */
                placed_changes.* except (row_image, last_landing_run),
                greatest(
                    placed_changes.last_landing_run, table_columns.newest_landing_run
                ) as last_landing_run,
                greatest(
                    placed_changes.landing_run, table_columns.newest_landing_run
                ) as change_landing_run,
                table_columns.column_names is not null as is_completed,
                case
                    when table_columns.column_names is null then placed_changes.row_image
                    else map_from_entries(
                        transform(
                            array_union(
                                map_keys(placed_changes.row_image), table_columns.column_names
                            ),
                            column_name -> struct(
                                column_name, try_element_at(placed_changes.row_image, column_name)
                            )
                        )
                    )
                end as row_image
            from (
                -- A backfill read is placed by its source time among the key's CDC changes, which
                -- keep their source position order: mono_ts is the running maximum source time
                -- along it.
                select
                    *,
                    case
                        when is_backfill then order_ts
                        else max(case when not is_backfill then order_ts end) over (
                            partition by source_system, source_name, source_table, key_json
                            order by sort_pos, event_id
                            rows between unbounded preceding and current row
                        )
                    end as mono_ts,
                    not is_context
                    and op != 'delete'
                    and image_has_unknown_values as has_unknown_values
                from (
                    -- The first delivery of an event is the one ordered first among its copies;
                    -- ordering the copies side by side under the key keeps one shuffle for the
                    -- chain.
                    select
                        *,
                        not (
                            event_id <=> lag(event_id) over (
                                partition by source_system, source_name, source_table, key_json
                                order by event_id, landing_run, file_path, line_number
                            )
                        ) as is_first_delivery,
                        max(landing_run) over (
                            partition by source_system, source_name, source_table, key_json
                        ) as last_landing_run
                    from (
                        {{ keyed_changes }}
                        union all
                        -- A truncate deletes every key of its table at its position.
                        select
                            {{ change_log_select('truncates', {
                                'source_system': 'table_keys.source_system',
                                'source_name': 'table_keys.source_name',
                                'source_table': 'table_keys.source_table',
                                'key_json': 'table_keys.key_json',
                                'op': "'delete'",
                                'row_image': 'map_from_arrays(array(), array())',
                                'is_backfill': 'false',
                                'order_ts': 'cast(null as bigint)',
                                'file_path': 'cast(null as string)',
                                'line_number': 'cast(null as bigint)',
                                'image_has_unknown_values': 'false',
                                'key_cohort': 'table_keys.key_cohort',
                            }, stored=true, indent=28) }},
                            false as is_context
                        from (
                            select distinct
                                source_system, source_name, source_table, key_json, key_cohort
                            from ({{ keyed_changes }}) as keyed_changes
                        ) as table_keys
                        inner join {{ ref('int_cdc__truncates') }} as truncates
                            on
                                table_keys.source_system = truncates.source_system
                                and table_keys.source_name = truncates.source_name
                                and table_keys.source_table = truncates.source_table
                        union all
                        -- Changes of the old keys of primary key changes that this run does not
                        -- recompute: read only to complete their successors' values.
                        select
                            {{ context_hint ~ change_log_select(
                                'change_log', stored=true, indent=28
                            ) }},
                            true as is_context
                        from {{ ref('int_cdc__change_log') }} as change_log
                        left semi join (
                            {{ key_successions_query }}
                        ) as key_successions
                            on
                                {{ same_key('change_log', 'key_successions', right_key='predecessor_key_json') }}
                        where {{ context_filter }}
                    ) as changes
                ) as deliveries
                where is_first_delivery
            ) as placed_changes
            left join (
                select
                    source_name,
                    source_table,
                    collect_set(column_name) as column_names,
                    max(landing_run) as newest_landing_run
                from {{ ref('int_spanner__table_columns') }}
                group by source_name, source_table
            ) as table_columns
                on
                    placed_changes.source_system = 'spanner'
                    and placed_changes.source_name = table_columns.source_name
                    and placed_changes.source_table = table_columns.source_table
        ) as completed_changes
    ) as flagged_changes
{%- endset %}

{%- if nothing_changed %}
    {{ nothing_to_write(flags_removed_rows=true) }}
{%- else %}
    {#- On disk: at a full build it is the whole change log, which would crowd the heap. A
        large change log fills its partitions and keeps them; one small enough to broadcast is
        merged, as an incremental run's changes are (docs/decisions/007). -#}
    {%- set coalesce_sorted_changes = is_incremental() or (
        count_rows(ref('int_cdc__change_log'), 'true') <= var('cdc_broadcast_max_rows') | int
    ) %}
    {%- set sorted_changes = cached_view(
        'cdc_history__sorted_changes',
        sorted_changes_query,
        'DISK_ONLY',
        coalesce_output=coalesce_sorted_changes
    ) %}
    {#- What this run processes: every change the run reads, and every one before; a full build
        reads the whole change log. -#}
    {%- if is_incremental() %}
        {%- do record_watermark(
            [processed_through, max_processed(sorted_changes, 'last_landing_run')] | max
        ) %}
        {#- The rows merged: recomputed versions and stored versions of the same keys, each at
            most one per sorted change. -#}
        {%- set merged_rows_bound = 2 * count_rows(sorted_changes, 'true') %}
    {%- else %}
        {%- do record_watermark(max_processed(ref('int_cdc__change_log'), 'landing_run')) %}
    {%- endif %}

{{ merge_only_into_partitions('key_cohort', touched) }}
{{ merge_only_into_keys('key_json', changed_keys, 'true', changed_key_count) if is_incremental() }}
{{ broadcast_merge_source(merged_rows_bound) if is_incremental() }}
with key_successions as (
    {{ key_successions_query }}
),

sorted_changes as (
    select * from {{ sorted_changes }}
),

predecessor_runs as (
    -- A successor's unknown values continue its old key's, so its rows reflect those runs too.
    select
        key_successions.source_system,
        key_successions.source_name,
        key_successions.source_table,
        key_successions.key_json,
        max(sorted_changes.last_landing_run) as landing_run
    from key_successions
    inner join sorted_changes
        on
            {{ same_key('key_successions', 'sorted_changes', left_key='predecessor_key_json') }}
    group by
        key_successions.source_system,
        key_successions.source_name,
        key_successions.source_table,
        key_successions.key_json
),

incomplete_changes as (
    -- Changes that do not carry every column's value (TOAST placeholder, 'u', partial image).
    select * from sorted_changes
    where has_unknown_values
),

unknown_cells as (
    select
        incomplete_changes.source_system,
        incomplete_changes.source_name,
        incomplete_changes.source_table,
        incomplete_changes.key_json,
        incomplete_changes.sort_key,
        cells.column_name,
        cast(null as string) as column_value,
        true as is_unknown
    from incomplete_changes
        lateral view explode(incomplete_changes.row_image) cells as column_name, column_value
    where cells.column_value is null
),

lineage_changes as (
    -- The known values a key's unknown cells may take: its own earlier ones, and its
    -- predecessor's from before the primary key change.
    select
        sorted_changes.source_system,
        sorted_changes.source_name,
        sorted_changes.source_table,
        sorted_changes.key_json,
        sorted_changes.sort_key,
        sorted_changes.row_image
    from sorted_changes
    where sorted_changes.key_has_unknown_values and sorted_changes.op != 'delete'
    union all
    select
        key_successions.source_system,
        key_successions.source_name,
        key_successions.source_table,
        key_successions.key_json,
        sorted_changes.sort_key,
        sorted_changes.row_image
    from key_successions
    inner join sorted_changes
        on
            {{ same_key('key_successions', 'sorted_changes', left_key='predecessor_key_json') }}
            and key_successions.sort_pos > sorted_changes.sort_pos
    where sorted_changes.op != 'delete'
),

unknown_columns as (
    -- The columns a table ever leaves unknown: only their known values can fill a cell.
    select
        source_system,
        source_name,
        source_table,
        collect_set(column_name) as column_names
    from unknown_cells
    group by source_system, source_name, source_table
),

known_cells as (
    select /*+ broadcast(unknown_columns) */
        lineage_changes.source_system,
        lineage_changes.source_name,
        lineage_changes.source_table,
        lineage_changes.key_json,
        lineage_changes.sort_key,
        cells.column_name,
        cells.column_value,
        false as is_unknown
    from lineage_changes
    inner join unknown_columns
        on
            lineage_changes.source_system = unknown_columns.source_system
            and lineage_changes.source_name = unknown_columns.source_name
            and lineage_changes.source_table = unknown_columns.source_table
        lateral view explode(
            map_filter(
                lineage_changes.row_image,
                (column_name, column_value) -> column_value is not null
                and array_contains(unknown_columns.column_names, column_name)
            )
        ) cells as column_name, column_value
),

filled_cells as (
    select
        *,
        last(column_value, true) over (
            partition by source_system, source_name, source_table, key_json, column_name
            order by sort_key
            rows between unbounded preceding and current row
        ) as latest_value
    from (
        select * from unknown_cells
        union all
        select * from known_cells
    ) as cells
),

filled_images as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        sort_key,
        map_from_entries(collect_list(struct(column_name, latest_value))) as filled_image
    from filled_cells
    where is_unknown and latest_value is not null
    group by source_system, source_name, source_table, key_json, sort_key
),

changes_and_fills as (
    -- A change's filled image sorts next to it in key order: the windows below that place it
    -- share one sort, where a join on sort_key would shuffle the change log twice.
    select
        source_system,
        source_name,
        source_table,
        key_json,
        sort_key,
        op,
        row_image,
        committed_at,
        txn_id,
        change_landing_run,
        key_cohort,
        cast(null as map <string, string>) as filled_image,
        false as is_fill
    from sorted_changes
    where not is_context
    union all
    select
        source_system,
        source_name,
        source_table,
        key_json,
        sort_key,
        cast(null as string) as op,
        cast(null as map <string, string>) as row_image,
        cast(null as timestamp) as committed_at,
        cast(null as string) as txn_id,
        cast(null as bigint) as change_landing_run,
        cast(null as int) as key_cohort,
        filled_image,
        true as is_fill
    from filled_images
),

changes_with_fills as (
    -- Newest first, a fill just before its change: every window below keeps this one sort and
    -- reads a key's next change in source order with lag(), its previous with lead().
    select
        *,
        case
            when lag(sort_key) over newest_first = sort_key
                then lag(filled_image) over newest_first
        end as fill_of_change,
        -- The newest landing run among the key's changes up to this one, and among all of them.
        max(change_landing_run) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key desc, is_fill desc
            rows between current row and unbounded following
        ) as landing_run_so_far,
        max(change_landing_run) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key desc, is_fill desc
            rows between unbounded preceding and unbounded following
        ) as key_landing_run
    from changes_and_fills
    window newest_first as (
        partition by source_system, source_name, source_table, key_json
        order by sort_key desc, is_fill desc
    )
),

completed_changes as (
    -- Partial row images are completed: an unknown column takes the latest earlier value.
    select
        *,
        coalesce(
            map_zip_with(
                row_image,
                fill_of_change,
                (column_name, own_value, filled_value) -> coalesce(own_value, filled_value)
            ),
            row_image
        ) as completed_image
    from changes_with_fills
    where not is_fill
),

transaction_ends as (
    -- Consecutive changes of a key inside one transaction make one version: its last change.
    select
        *,
        lag(txn_id) over newest_first as next_txn_id
    from completed_changes
    window newest_first as (
        partition by source_system, source_name, source_table, key_json
        order by sort_key desc
    )
),

transitions as (
    select
        *,
        -- A JSON object of the known columns, keys sorted. Values are JSON text already, so
        -- they are spliced in, not encoded again.
        case
            when op != 'delete' then concat(
                '{',
                array_join(
                    transform(
                        array_sort(
                            map_keys(map_filter(completed_image, (k, v) -> v is not null))
                        ),
                        k -> concat(
                            substr(to_json(array(k)), 2, length(to_json(array(k))) - 2),
                            ':',
                            completed_image[k]
                        )
                    ),
                    ','
                ),
                '}'
            )
        end as row_json,
        -- The columns the image names but cannot give a value for, sorted.
        case
            when op != 'delete'
                then array_sort(map_keys(map_filter(completed_image, (k, v) -> v is null)))
        end as unavailable_columns
    from transaction_ends
    where next_txn_id is null or next_txn_id != txn_id
),

state_changes as (
    -- Only real changes: a state equal to the one before it (or a delete with nothing open)
    -- is not a transition.
    select
        *,
        row_json <=> lead(row_json) over newest_first
        and unavailable_columns <=> lead(unavailable_columns) over newest_first
        and (op = 'delete') = coalesce(lead(op) over newest_first = 'delete', true)
            as repeats_previous_state
    from transitions
    window newest_first as (
        partition by source_system, source_name, source_table, key_json
        order by sort_key desc
    )
),

timed_transitions as (
    -- valid_from is the source time, but never later than the next version's.
    select
        *,
        min(committed_at) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key desc
            rows between unbounded preceding and current row
        ) as effective_at
    from state_changes
    where not repeats_previous_state
),

ended_versions as (
    -- A version reflects the key's changes up to the one that ends it (the next transition), so
    -- a change that sorts after that leaves it as it is; the open version, and one whose
    -- valid_from a later version's time set, reflect every change of the key.
    select
        *,
        lag(effective_at) over newest_first as valid_to,
        coalesce(lag(op) over newest_first = 'delete', false) as closed_by_delete,
        row_number() over newest_first = 1 as is_current,
        case
            when effective_at < committed_at then key_landing_run
            else coalesce(lag(landing_run_so_far) over newest_first, key_landing_run)
        end as reflected_landing_run
    from timed_transitions
    window newest_first as (
        partition by source_system, source_name, source_table, key_json
        order by sort_key desc
    )
),

versions as (
    -- Never less than an earlier version's: the versions a run changes are the key's newest
    -- ones, from the first it changed (the rows the run's tests read).
    select
        *,
        max(reflected_landing_run) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key desc
            rows between current row and unbounded following
        ) as last_landing_run
    from ended_versions
),

recomputed_versions as (
    -- The table's columns, in its order.
    select  -- noqa: ST06
        versions.source_system,
        versions.source_name,
        versions.source_table,
        versions.key_json,
        versions.row_json,
        versions.unavailable_columns,
        versions.op,
        versions.effective_at as valid_from,
        versions.valid_to,
        versions.is_current,
        versions.closed_by_delete,
        versions.sort_key,
        versions.committed_at,
        greatest(versions.last_landing_run, predecessor_runs.landing_run) as last_landing_run,
        versions.key_cohort
    from versions
    left join predecessor_runs
        on
            {{ same_key('versions', 'predecessor_runs') }}
    where versions.op != 'delete'
),

{%- if is_incremental() %}

    stored_versions as (
        -- The stored versions of the recomputed keys, whole: a recomputed version is compared
        -- with its stored one here, so the MERGE reads no more of the target than its key.
        select previous.*
        from {{ this }} as previous
        where
            {{ in_values('previous.key_cohort', touched) }}
            and {{ key_is_changed('previous', changed_keys, changed_keys_hint) }}
    ),

    merged_versions as (
        -- New and changed versions are written, versions the recomputation no longer has are
        -- deleted by their unique key, versions equal to their stored ones are left out.
        select
            recomputed.row_json,
            recomputed.unavailable_columns,
            recomputed.op,
            recomputed.valid_from,
            recomputed.valid_to,
            recomputed.is_current,
            recomputed.closed_by_delete,
            recomputed.committed_at,
            recomputed.last_landing_run,
            coalesce(recomputed.source_system, stored_version.source_system) as source_system,
            coalesce(recomputed.source_name, stored_version.source_name) as source_name,
            coalesce(recomputed.source_table, stored_version.source_table) as source_table,
            coalesce(recomputed.key_json, stored_version.key_json) as key_json,
            coalesce(recomputed.sort_key, stored_version.sort_key) as sort_key,
            coalesce(recomputed.key_cohort, stored_version.key_cohort) as key_cohort,
            recomputed.sort_key is null as is_removed
        from recomputed_versions as recomputed
        full outer join stored_versions as stored_version
            on
                {{ same_key('recomputed', 'stored_version') }}
                and recomputed.sort_key = stored_version.sort_key
        where
            recomputed.sort_key is null
            or stored_version.sort_key is null
            or not ({{ rows_equal('recomputed', 'stored_version', [
                'row_json', 'unavailable_columns', 'op', 'valid_from', 'valid_to', 'is_current',
                'closed_by_delete', 'committed_at', 'last_landing_run', 'key_cohort',
            ]) }})
    ),

    final as (
        select * from merged_versions
    )
{%- else %}

    final as (
        select {{ write_clustered_by('key_cohort') }} * from recomputed_versions
    )
{%- endif %}

select * from final
{%- endif %}
