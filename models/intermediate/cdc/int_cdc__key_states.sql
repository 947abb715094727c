{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'source_name', 'source_table', 'key_json'],
        partition_by=['key_cohort'],
        tblproperties={'delta.enableDeletionVectors': 'true'},
        pre_hook=(
            "{%- set bounds = history_batch_bounds() -%}"
            "{{ mark_applied_through(bounds.to_run, bounds.from_run) }}"
        ),
        post_hook=[
            "{%- do drop_step_table(this, this.identifier ~ '__changed_states') -%}
            {%- for name in ['placed_changes', 'recomputed_changes',
                'recomputed_keys', 'candidates', 'candidate_changes', 'forced_keys', 'new_changes']
            -%}
                {%- do uncache_view(this.identifier ~ '__' ~ name) -%}
            {%- endfor -%}",
            "{{ unmark_applied_through() }}",
        ],
    )
}}

{#- Every key's versions are built here, and where the key stands after the changes applied so
    far (its state). A run changes the keys with new changes, each one of two ways that give the
    same versions (docs/decisions/011):
    - folded: when every new change of the key sorts after all of its applied ones (in-order
      CDC, the common case), its new versions follow from its state and its new changes alone;
    - recomputed from all its changes in the change log: a late change, a duplicate of an
      applied one, a change in the transaction of the key's last one, a new truncate of its
      table, a primary key change (either half new, or a new change of the old key), a Spanner
      column seen for the first time, a value the state does not hold, or a mart that has not
      applied an earlier run.
    A changed key's row carries the versions its run wrote (`versions`, every version when
    recomputed), which cdc_history and cdc_current merge; `batch_run` names that run.

    A version's last_landing_run is the newest landing run among the changes up to the one that
    fixes its end: its next version's start, or the latest change that moves that start earlier
    (a start is never later than the next version's); every change counts for the open version.
    A fold leaves the key's closed versions as they were, theirs included. -#}
{%- set bounds = history_batch_bounds() %}
{%- set to_run = bounds.to_run %}
{%- set change_log = ref('int_cdc__change_log') %}
{%- set successions = ref('int_cdc__key_successions') %}
{%- set truncates = ref('int_cdc__truncates') %}

{#- A key's state as a seed: one change-log row at the key's last position, whose image holds
    the values the key knows. -#}
{%- set seed_columns = {
    'op': "'seed'",
    'row_image': 'states.known_image',
    'is_full_image': 'true',
    'is_backfill': 'false',
    'order_ts': 'states.cdc_max_order_ts',
    'sort_pos': 'states.last_cdc_position.sort_pos',
    'committed_at': 'states.last_transition.committed_at',
    'txn_id': 'states.last_txn_id',
    'event_id': 'states.last_cdc_position.event_id',
    'file_path': 'cast(null as string)',
    'line_number': 'cast(null as bigint)',
    'landing_run': 'states.max_landing_run',
    'image_has_unknown_values': 'false',
} %}
{%- set transition_type = (
    'struct<sort_key: string, op: string, row_json: string, '
    ~ 'unavailable_columns: array<string>, committed_at: timestamp, is_delete: boolean>'
) %}
{%- set no_seed = (
    'cast(null as string) as seed_sort_key, cast(null as ' ~ transition_type ~ ') as seed_transition'
) %}
{#- Tables a new truncate emptied, or in which a Spanner column shows for the first time:
    every key of them is recomputed. -#}
{%- set emptied_or_widened_tables %}
    select source_system, source_name, source_table
    from {{ truncates }}
    where landing_run > {{ bounds.from_run }} and landing_run <= {{ to_run }}
    union
    select 'spanner' as source_system, source_name, source_table
    from {{ ref('int_spanner__table_columns') }}
    where landing_run > {{ bounds.from_run }} and landing_run <= {{ to_run }}
{%- endset %}

{#- The steps below are views and cached sets named after this model (temporary_view). -#}
{%- set step = this.identifier ~ '__' %}

{%- if is_incremental() %}
    {%- set from_run = bounds.from_run %}

    {%- set new_changes = temporary_view(step ~ 'new_changes', (
        'select * from ' ~ change_log
        ~ ' where landing_run > ' ~ from_run ~ ' and landing_run <= ' ~ to_run
    )) %}

    {#- Keys recomputed whatever their new changes: changes the states hold but a mart has not
        applied; primary key changes, new or whose old key changed; every key of a table a new
        truncate emptied or that shows a Spanner column first. -#}
    {%- set forced_keys_sql %}
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ new_changes }}
        where landing_run <= {{ bounds.states_through }}
        union
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ successions }}
        where landing_run > {{ from_run }} and landing_run <= {{ to_run }}
        union
        select
            successions.source_system,
            successions.source_name,
            successions.source_table,
            successions.key_json,
            successions.key_cohort
        from {{ successions }} as successions
        left semi join {{ new_changes }} as new_changes
            on {{ same_key('successions', 'new_changes', left_key='predecessor_key_json') }}
        where successions.landing_run <= {{ to_run }}
        union
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ this }}
        left semi join ({{ emptied_or_widened_tables }}) as changed_tables
            using (source_system, source_name, source_table)
        union
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ new_changes }}
        left semi join ({{ emptied_or_widened_tables }}) as changed_tables
            using (source_system, source_name, source_table)
    {%- endset %}
    {%- set forced_keys = cached_view(step ~ 'forced_keys', forced_keys_sql) %}

    {#- The new changes of the other keys, with their states as seeds. -#}
    {%- set candidate_changes_sql %}
        select
            {{ change_log_select('states', seed_columns, stored=true, indent=12) }},
            false as is_context,
            true as is_seed,
            states.last_sort_key as seed_sort_key,
            states.last_transition as seed_transition
        from {{ this }} as states
        left semi join {{ new_changes }} as new_changes
            on {{ same_key('states', 'new_changes') }}
        left anti join {{ forced_keys }} as forced_keys
            on {{ same_key('states', 'forced_keys') }}
        union all
        select
            {{ change_log_select('new_changes', stored=true, indent=12) }},
            false as is_context,
            false as is_seed,
            {{ no_seed }}
        from {{ new_changes }} as new_changes
        left anti join {{ forced_keys }} as forced_keys
            on {{ same_key('new_changes', 'forced_keys') }}
    {%- endset %}
    {%- set candidate_changes = temporary_view(step ~ 'candidate_changes', candidate_changes_sql) %}

    {#- Such a key is folded only if every new change of it sorts after its applied ones (in
        source order and position, not earlier in time than its last state), its first new
        change is outside the transaction of its last applied one, and its state holds what
        they leave unknown; a new key of a table with truncates is recomputed (a truncate may
        sort after its changes). The seed's parts reach its key's changes by windows. -#}
    {%- set candidates_sql %}
        select
            * except (seed_position, seed_known_columns, seed_txn_id, seed_committed_at,
                has_seed, has_truncates, table_has_truncates, extends_state, first_new_txn_id,
                is_new_in_truncated_table),
            bool_and(extends_state) over by_key
            and (first_new_txn_id is null or not first_new_txn_id <=> seed_txn_id)
            and not is_new_in_truncated_table as is_folded
        from (
            select
                *,
                is_seed or not has_seed or coalesce(
                    sort_key > seed_position.sort_key
                    and (
                        is_backfill
                        or seed_position.sort_pos is null
                        or named_struct('sort_pos', sort_pos, 'event_id', event_id)
                        > named_struct(
                            'sort_pos', seed_position.sort_pos,
                            'event_id', seed_position.event_id
                        )
                    )
                    and (seed_committed_at is null or committed_at >= seed_committed_at)
                    and (
                        not has_unknown_values
                        or forall(
                            map_keys(map_filter(row_image, (name, value) -> value is null)),
                            name -> array_contains(seed_known_columns, name)
                        )
                    ),
                    false
                ) as extends_state,
                (min(case when not is_seed then struct(sort_key, txn_id) end) over by_key).txn_id
                    as first_new_txn_id,
                not has_seed and table_has_truncates as is_new_in_truncated_table
            from (
                select
                    *,
                    max(case when is_seed then struct(sort_key, sort_pos, event_id) end)
                        over by_key as seed_position,
                    max(case when is_seed then map_keys(row_image) end)
                        over by_key as seed_known_columns,
                    max(case when is_seed then txn_id end) over by_key as seed_txn_id,
                    max(case when is_seed then committed_at end) over by_key as seed_committed_at,
                    bool_or(is_seed) over by_key as has_seed,
                    coalesce(truncated_tables.has_truncates, false) as table_has_truncates
                from ({{ placed_changes(candidate_changes) | indent(16) }}) as placed
                left join (
                    select distinct source_system, source_name, source_table, true as has_truncates
                    from {{ truncates }}
                    where landing_run <= {{ to_run }}
                ) as truncated_tables
                    using (source_system, source_name, source_table)
                window by_key as (partition by source_system, source_name, source_table, key_json)
            ) as placed
            window by_key as (partition by source_system, source_name, source_table, key_json)
        ) as checked
        window by_key as (partition by source_system, source_name, source_table, key_json)
    {%- endset %}
    {%- set candidates = cached_view(step ~ 'candidates', candidates_sql) %}

    {%- set recomputed_keys_sql %}
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ forced_keys }}
        union
        select source_system, source_name, source_table, key_json, key_cohort
        from {{ candidates }}
        where not is_folded and not is_seed
    {%- endset %}
    {%- set recomputed_keys = cached_view(step ~ 'recomputed_keys', recomputed_keys_sql) %}
    {%- set recomputed_hint = broadcast_hint(
        'recomputed_keys', count_rows(recomputed_keys, 'true')
    ) %}
    {%- set recomputed_cohorts = in_values(
        'change_log.key_cohort', distinct_values(recomputed_keys, 'key_cohort', 'true')
    ) %}
{%- else %}
    {%- set recomputed_keys = temporary_view(step ~ 'recomputed_keys', (
        'select distinct source_system, source_name, source_table, key_json, key_cohort from '
        ~ change_log ~ ' where landing_run <= ' ~ to_run
    )) %}
    {%- set recomputed_hint = '' %}
    {%- set recomputed_cohorts = 'true' %}
{%- endif %}

{#- Every change of the keys recomputed; and, for cdc_history's rule that a new key's unknown
    values continue its old key's, the changes of their old keys (context). -#}
{%- set recomputed_changes_sql -%}
    select {{ recomputed_hint }}  -- noqa: LT02
        {{ change_log_select('change_log', stored=true, indent=8) }},
        false as is_context,
        false as is_seed,
        {{ no_seed }}
    from {{ change_log }} as change_log
    {%- if is_incremental() %}
        left semi join {{ recomputed_keys }} as recomputed_keys
            on {{ same_key('change_log', 'recomputed_keys') }}
    {%- endif %}
    where {{ recomputed_cohorts }} and change_log.landing_run <= {{ to_run }}
    union all
    -- A truncate deletes every key of its table at its position.
    select
        {{ change_log_select('truncates', {
            'source_system': 'recomputed_keys.source_system',
            'source_name': 'recomputed_keys.source_name',
            'source_table': 'recomputed_keys.source_table',
            'key_json': 'recomputed_keys.key_json',
            'op': "'delete'",
            'row_image': 'map_from_arrays(array(), array())',
            'is_full_image': 'true',
            'is_backfill': 'false',
            'order_ts': 'cast(null as bigint)',
            'file_path': 'cast(null as string)',
            'line_number': 'cast(null as bigint)',
            'image_has_unknown_values': 'false',
            'key_cohort': 'recomputed_keys.key_cohort',
        }, stored=true, indent=8) }},
        false as is_context,
        false as is_seed,
        {{ no_seed }}
    from {{ recomputed_keys }} as recomputed_keys
    inner join {{ truncates }} as truncates
        on
            recomputed_keys.source_system = truncates.source_system
            and recomputed_keys.source_name = truncates.source_name
            and recomputed_keys.source_table = truncates.source_table
    where truncates.landing_run <= {{ to_run }}
    {%- if is_incremental() %}
        union all
        -- The old keys' changes, read only for the values they knew (a full build reads every
        -- key's own).
        select
            {{ change_log_select('change_log', stored=true, indent=12) }},
            true as is_context,
            false as is_seed,
            {{ no_seed }}
        from {{ change_log }} as change_log
        left semi join (
            select {{ recomputed_hint }} successions.*
            from {{ successions }} as successions
            left semi join {{ recomputed_keys }} as recomputed_keys
                on {{ same_key('successions', 'recomputed_keys') }}
        ) as successions
            on {{ same_key('change_log', 'successions', right_key='predecessor_key_json') }}
        where change_log.landing_run <= {{ to_run }}
    {%- endif %}
{%- endset %}
{%- set recomputed_changes = temporary_view(step ~ 'recomputed_changes', recomputed_changes_sql) %}

{%- set placed_sql %}
    {%- if is_incremental() %}
        select * except (is_folded) from {{ candidates }} where is_folded
        union all
    {%- endif %}
    {{ placed_changes(recomputed_changes) }}
{%- endset %}
{%- set placed = cached_view(
    step ~ 'placed_changes',
    placed_sql,
    'MEMORY_AND_DISK' if is_incremental() else 'DISK_ONLY',
    coalesce_output=is_incremental()
) %}

{%- set states_sql -%}
    with placed_changes as (
        select * from {{ placed }}
    ),

    key_successions as (
        -- The primary key changes of the keys recomputed: successor and predecessor key.
        select {{ recomputed_hint }} distinct
            successions.source_system,
            successions.source_name,
            successions.source_table,
            successions.key_json,
            successions.predecessor_key_json,
            successions.sort_pos
        from {{ successions }} as successions
    {%- if is_incremental() %}
            left semi join {{ recomputed_keys }} as recomputed_keys
                on {{ same_key('successions', 'recomputed_keys') }}
    {%- endif %}
        where successions.landing_run <= {{ to_run }}
    ),

    predecessor_changes as (
        -- An old key's changes as its successors read them: its own when it is recomputed in a
        -- full build, else the context read for them.
        select * from placed_changes
        where {{ 'is_context' if is_incremental() else 'not is_seed' }}
    ),

    predecessor_runs as (
        -- A successor's unknown values continue its old key's, so its rows reflect those runs too.
        select
            key_successions.source_system,
            key_successions.source_name,
            key_successions.source_table,
            key_successions.key_json,
            max(predecessor_changes.landing_run) as landing_run
        from key_successions
        inner join predecessor_changes
            on
                {{ same_key(
                    'key_successions', 'predecessor_changes', left_key='predecessor_key_json'
                ) }}
        group by
            key_successions.source_system,
            key_successions.source_name,
            key_successions.source_table,
            key_successions.key_json
    ),

    own_changes as (
        select * from placed_changes
        where not is_context
    ),

    incomplete_changes as (
        -- Changes that do not carry every column's value (TOAST placeholder, 'u', partial image).
        select * from own_changes
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
        -- The known values a key's unknown cells may take: its own earlier ones (a seed's among
        -- them), and its predecessor's from before the primary key change.
        select
            source_system,
            source_name,
            source_table,
            key_json,
            sort_key,
            row_image
        from own_changes
        where key_has_unknown_values and op != 'delete'
        union all
        select
            key_successions.source_system,
            key_successions.source_name,
            key_successions.source_table,
            key_successions.key_json,
            predecessor_changes.sort_key,
            predecessor_changes.row_image
        from key_successions
        inner join predecessor_changes
            on
                {{ same_key(
                    'key_successions', 'predecessor_changes', left_key='predecessor_key_json'
                ) }}
                and key_successions.sort_pos > predecessor_changes.sort_pos
        where predecessor_changes.op != 'delete'
    ),

    unknown_columns as (
        -- The columns a table leaves unknown here: only their known values can fill a cell.
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
        -- share one sort, where a join on sort_key would shuffle the changes twice.
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
            landing_run,
            table_run,
            is_backfill,
            order_ts,
            sort_pos,
            event_id,
            is_seed,
            seed_transition,
            key_cohort,
            cast(null as map <string, string>) as filled_image,
            false as is_fill
        from own_changes
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
            cast(null as bigint) as landing_run,
            cast(null as bigint) as table_run,
            cast(null as boolean) as is_backfill,
            cast(null as bigint) as order_ts,
            cast(null as string) as sort_pos,
            cast(null as string) as event_id,
            cast(null as boolean) as is_seed,
            cast(null as {{ transition_type }}) as seed_transition,
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
            end as fill_of_change
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

    ordered_changes as (
        -- Where each change stands, and where its key stands after all of them (what a later
        -- fold starts from): the newest landing run up to the change, its transaction's next
        -- change; the key's last position, transaction and source time, the image of its last
        -- change that is not a delete.
        select
            *,
            max(landing_run) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between current row and unbounded following
            ) as run_through,
            lag(txn_id) over newest_first as next_txn_id,
            max(sort_key) over by_key as last_sort_key,
            max_by(txn_id, sort_key) over by_key as last_txn_id,
            max(case when not is_backfill then order_ts end) over by_key as cdc_max_order_ts,
            max(
                case
                    when not is_backfill and sort_pos is not null
                        then named_struct('sort_pos', sort_pos, 'event_id', event_id)
                end
            ) over by_key as last_cdc_position,
            max_by(
                case when op != 'delete' then completed_image end,
                case when op != 'delete' then sort_key end
            ) over by_key as known_image,
            max(landing_run) over by_key as key_run,
            max(table_run) over by_key as table_run_of_key
        from completed_changes
        window
            newest_first as (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
            ),
            by_key as (partition by source_system, source_name, source_table, key_json)
    ),

    transitions as (
        -- Consecutive changes of a key inside one transaction make one version: its last change.
        -- A seed stands for the key's last applied state.
        select
            *,
            case
                when is_seed then coalesce(seed_transition.is_delete, true)
                else op = 'delete'
            end as is_delete,
            case when is_seed then seed_transition.op else op end as version_op,
            case when is_seed then seed_transition.sort_key else sort_key end as version_sort_key,
            case
                when is_seed then seed_transition.row_json
                when op != 'delete' then {{ row_json_from_image('completed_image') }}
            end as row_json,
            case
                when is_seed then seed_transition.unavailable_columns
                when op != 'delete' then {{ unavailable_columns_of_image('completed_image') }}
            end as unavailable_columns
        from ordered_changes
        where next_txn_id is null or next_txn_id != txn_id
    ),

    state_changes as (
        -- Only real changes: a state equal to the one before it (or a delete with nothing open)
        -- is not a transition (it stays, flagged, for its key's row below). A seed is one when
        -- the key had one.
        select
            *,
            case
                when is_seed then seed_transition is null
                else
                    row_json <=> lead(row_json) over newest_first
                    and unavailable_columns <=> lead(unavailable_columns) over newest_first
                    and is_delete = coalesce(lead(is_delete) over newest_first, true)
            end as repeats_previous_state
        from transitions
        window newest_first as (
            partition by source_system, source_name, source_table, key_json
            order by sort_key desc
        )
    ),

    timed_transitions as (
        -- valid_from is the source time, but never later than the next version's; a transition
        -- whose start no later one moves earlier records the runs up to it.
        select
            *,
            min(case when not repeats_previous_state then committed_at end) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between unbounded preceding and current row
            ) as effective_at,
            count(case when not repeats_previous_state then 1 end) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between unbounded preceding and 1 preceding
            ) = 0 as is_last_transition
        from state_changes
    ),

    anchored_transitions as (
        select
            *,
            last(
                case
                    when
                        not repeats_previous_state
                        and (is_last_transition or committed_at <=> effective_at)
                        then run_through
                end,
                true
            ) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between unbounded preceding and current row
            ) as run_of_end
        from timed_transitions
    ),

    versions as (
        -- Each transition and the next one in source order, which ends it.
        select
            *,
            last(case when not repeats_previous_state then effective_at end, true) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between unbounded preceding and 1 preceding
            ) as valid_to,
            coalesce(
                last(case when not repeats_previous_state then is_delete end, true) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between unbounded preceding and 1 preceding
                ),
                false
            ) as closed_by_delete,
            last(case when not repeats_previous_state then run_of_end end, true) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key desc
                rows between unbounded preceding and 1 preceding
            ) as closing_run
        from anchored_transitions
    ),

    key_versions as (
        select
            versions.source_system,
            versions.source_name,
            versions.source_table,
            versions.key_json,
            max(versions.key_cohort) as key_cohort,
            max(versions.last_sort_key) as last_sort_key,
            max(versions.last_cdc_position) as last_cdc_position,
            max(versions.cdc_max_order_ts) as cdc_max_order_ts,
            max(versions.last_txn_id) as last_txn_id,
            max_by(
                case
                    when not versions.repeats_previous_state
                        then named_struct(
                            'sort_key', versions.version_sort_key,
                            'op', versions.version_op,
                            'row_json', versions.row_json,
                            'unavailable_columns', versions.unavailable_columns,
                            'committed_at', versions.committed_at,
                            'is_delete', versions.is_delete
                        )
                end,
                case when not versions.repeats_previous_state then versions.sort_key end
            ) as last_transition,
            first(versions.known_image) as known_image,
            greatest(max(versions.table_run_of_key), max(predecessor_runs.landing_run))
                as floor_run,
            greatest(
                max(versions.key_run),
                max(versions.table_run_of_key),
                max(predecessor_runs.landing_run)
            ) as max_landing_run,
            collect_list(
                case
                    when not versions.repeats_previous_state and not versions.is_delete
                        then named_struct(
                            'row_json', versions.row_json,
                            'unavailable_columns', versions.unavailable_columns,
                            'op', versions.version_op,
                            'valid_from', versions.effective_at,
                            'valid_to', versions.valid_to,
                            'is_current', versions.is_last_transition,
                            'closed_by_delete', versions.closed_by_delete,
                            'sort_key', versions.version_sort_key,
                            'committed_at', versions.committed_at,
                            'closing_run', versions.closing_run
                        )
                end
            ) as written_versions
        from versions
        left join predecessor_runs
            on {{ same_key('versions', 'predecessor_runs') }}
        group by
            versions.source_system,
            versions.source_name,
            versions.source_table,
            versions.key_json
    ),

    final as (
        -- A version's last_landing_run is the newest run up to the change that fixes its end,
        -- or every run for the open version (at least its old key's and its table's columns').
        select
            key_versions.source_system,
            key_versions.source_name,
            key_versions.source_table,
            key_versions.key_json,
            key_versions.last_sort_key,
            key_versions.last_cdc_position,
            key_versions.cdc_max_order_ts,
            key_versions.last_txn_id,
            key_versions.last_transition,
            key_versions.known_image,
            key_versions.max_landing_run,
            {{ 'recomputed_keys.key_json is not null' if is_incremental() else 'true' }}
                as is_recomputed,
            transform(
                key_versions.written_versions,
                version -> named_struct(
                    'row_json', version.row_json,
                    'unavailable_columns', version.unavailable_columns,
                    'op', version.op,
                    'valid_from', version.valid_from,
                    'valid_to', version.valid_to,
                    'is_current', version.is_current,
                    'closed_by_delete', version.closed_by_delete,
                    'sort_key', version.sort_key,
                    'committed_at', version.committed_at,
                    'last_landing_run', greatest(
                        coalesce(version.closing_run, key_versions.max_landing_run),
                        key_versions.floor_run
                    )
                )
            ) as versions,
            cast({{ to_run }} as bigint) as batch_run,
            key_versions.key_cohort
        from key_versions
    {%- if is_incremental() %}
            left join {{ recomputed_keys }} as recomputed_keys
                on {{ same_key('key_versions', 'recomputed_keys') }}
    {%- endif %}
    )

    select * from final
{%- endset %}

{%- if is_incremental() %}
    {%- set changed_states = step_table(this, step ~ 'changed_states', states_sql) %}
    {{ merge_only_into_partitions(
        'key_cohort', distinct_values(changed_states, 'key_cohort', 'true')
    ) }}
    select * from {{ changed_states }}
{%- else %}
    {{ states_sql }}
{%- endif %}
