-- depends_on: {{ ref('int_cdc__key_registry') }}
-- depends_on: {{ ref('int_cdc__truncates') }}
{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_cohort'],
        post_hook="{{ uncache_view('cdc_history__changed_keys') }}",
    )
}}

{#- A run recomputes the history of the keys it changed, from the change log, so a late event
    takes its place; the other keys of the partitions it rewrites keep their rows
    (docs/decisions/003). Dynamic partition overwrite may read the table it writes. -#}
{%- if is_incremental() %}
    {%- set processed_through = max_processed(this, 'last_landing_run') %}
    {%- set changed_keys = cached_view(
        'cdc_history__changed_keys', history_changed_keys(processed_through)
    ) %}
    {%- set touched = distinct_values(changed_keys, 'key_cohort', 'true') %}
    {%- set changed_key_count = count_rows(changed_keys, 'true') %}
    {%- set changed_keys_hint = broadcast_hint('changed_keys', changed_key_count) %}
    {%- set predecessor_cohorts = distinct_values(
        ref('int_cdc__key_successions'),
        'predecessor_key_cohort',
        in_values('key_cohort', touched)
    ) %}
{%- endif %}

with
{%- if is_incremental() %}
    changed_keys as (
        select * from {{ changed_keys }}
    ),
{%- endif %}

keyed_changes as (
    select
        change_log.*,
        false as is_context
    from {{ ref('int_cdc__change_log') }} as change_log
    {%- if is_incremental() %}
        where
            {{ in_values('change_log.key_cohort', touched) }}
            and {{ key_is_changed('change_log', changed_keys_hint) }}
    {%- endif %}
),

key_successions as (
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
            and {{ key_is_changed('successions', changed_keys_hint) }}
    {%- endif %}
),

predecessor_context as (
    -- Changes of the old keys of primary key changes that this run does not recompute: read
    -- only to complete their successors' values. The successions are those of changed keys.
    select {{ broadcast_hint('key_successions', changed_key_count) if is_incremental() }}
        change_log.*,
        true as is_context
    from {{ ref('int_cdc__change_log') }} as change_log
    left semi join key_successions
        on
            {{ same_key('change_log', 'key_successions', right_key='predecessor_key_json') }}
    {%- if is_incremental() %}
        where
            {{ in_values('change_log.key_cohort', predecessor_cohorts) }}
            and not {{ key_is_changed('change_log', changed_keys_hint) }}
    {%- else %}
        where false
    {%- endif %}
),

table_keys as (
    select distinct
        source_system,
        source_name,
        source_table,
        key_json,
        key_cohort
    from keyed_changes
),

truncate_deletes as (
    -- A truncate deletes every key of its table at its position.
    select
        table_keys.source_system,
        table_keys.source_name,
        table_keys.source_table,
        table_keys.key_json,
        'delete' as op,
        map_from_arrays(array(), array()) as row_image,
        true as is_full_image,
        false as is_backfill,
        cast(null as bigint) as order_ts,
        truncates.sort_pos,
        truncates.committed_at,
        truncates.txn_id,
        truncates.event_id,
        cast(null as string) as file_path,
        cast(null as bigint) as line_number,
        truncates.landing_run,
        table_keys.key_cohort,
        false as is_context
    from table_keys
    inner join {{ ref('int_cdc__truncates') }} as truncates
        on
            table_keys.source_system = truncates.source_system
            and table_keys.source_name = truncates.source_name
            and table_keys.source_table = truncates.source_table
),

changes as (
    select * from keyed_changes
    union all
    select * from truncate_deletes
    union all
    select * from predecessor_context
),

predecessor_runs as (
    -- A successor's unknown values continue its old key's, so its rows reflect those runs too.
    select
        key_successions.source_system,
        key_successions.source_name,
        key_successions.source_table,
        key_successions.key_json,
        max(changes.landing_run) as landing_run
    from key_successions
    inner join changes
        on
            {{ same_key('key_successions', 'changes', left_key='predecessor_key_json') }}
    group by
        key_successions.source_system,
        key_successions.source_name,
        key_successions.source_table,
        key_successions.key_json
),

deliveries as (
    select
        *,
        row_number() over (
            partition by source_system, source_name, source_table, key_json, event_id
            order by landing_run, file_path, line_number
        ) as delivery_number,
        max(landing_run) over (
            partition by source_system, source_name, source_table, key_json
        ) as last_landing_run
    from changes
),

unique_changes as (
    select * from deliveries
    where delivery_number = 1
),

placed_changes as (
    -- A backfill read is placed by its source time among the key's CDC changes, which keep
    -- their source position order: mono_ts is the running maximum source time along it.
    select
        *,
        case
            when is_backfill then order_ts
            else max(case when not is_backfill then order_ts end) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_pos, event_id
                rows between unbounded preceding and current row
            )
        end as mono_ts
    from unique_changes
),

sorted_changes as (
    select
        *,
        concat_ws(
            '.',
            lpad(cast(coalesce(mono_ts, 0) + 300000000000000000 as string), 18, '0'),
            case when is_backfill then '0' else '1' end,
            sort_pos,
            case when op = 'delete' then '0' else '1' end,
            event_id
        ) as sort_key
    from placed_changes
),

incomplete_changes as (
    -- Changes that do not carry every column's value (TOAST placeholder, 'u', partial image).
    select * from sorted_changes
    where
        not is_context
        and op != 'delete'
        and exists(map_values(row_image), v -> v is null)
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
    left semi join incomplete_changes
        on
            {{ same_key('sorted_changes', 'incomplete_changes') }}
    where sorted_changes.op != 'delete'
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

known_cells as (
    select
        lineage_changes.source_system,
        lineage_changes.source_name,
        lineage_changes.source_table,
        lineage_changes.key_json,
        lineage_changes.sort_key,
        cells.column_name,
        cells.column_value,
        false as is_unknown
    from lineage_changes
        lateral view explode(lineage_changes.row_image) cells as column_name, column_value
    where cells.column_value is not null
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

completed_changes as (
    -- Partial row images are completed: an unknown column takes the latest earlier value.
    select
        sorted_changes.*,
        coalesce(
            map_zip_with(
                sorted_changes.row_image,
                filled_images.filled_image,
                (column_name, own_value, filled_value) -> coalesce(own_value, filled_value)
            ),
            sorted_changes.row_image
        ) as completed_image
    from sorted_changes
    left join filled_images
        on
            {{ same_key('sorted_changes', 'filled_images') }}
            and sorted_changes.sort_key = filled_images.sort_key
),

transaction_ends as (
    -- Consecutive changes of a key inside one transaction make one version: its last change.
    select
        *,
        lead(txn_id) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key
        ) as next_txn_id
    from completed_changes
    where not is_context
),

transitions as (
    select
        *,
        case
            when op != 'delete' then {{ row_json_from_image('completed_image') }}
        end as row_json,
        case
            when op != 'delete' then {{ unavailable_columns_of_image('completed_image') }}
        end as unavailable_columns
    from transaction_ends
    where next_txn_id is null or next_txn_id != txn_id
),

state_changes as (
    -- Only real changes: a state equal to the one before it (or a delete with nothing open)
    -- is not a transition.
    select
        *,
        row_json <=> lag(row_json) over key_order
        and unavailable_columns <=> lag(unavailable_columns) over key_order
        and (op = 'delete') = coalesce(lag(op) over key_order = 'delete', true)
            as repeats_previous_state
    from transitions
    window key_order as (
        partition by source_system, source_name, source_table, key_json
        order by sort_key
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

versions as (
    select
        *,
        lead(effective_at) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key
        ) as valid_to,
        coalesce(
            lead(op) over (
                partition by source_system, source_name, source_table, key_json
                order by sort_key
            ) = 'delete',
            false
        ) as closed_by_delete,
        count(*) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key
            rows between 1 following and unbounded following
        ) = 0 as is_current
    from timed_transitions
),

recomputed_versions as (
    select
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

    carried_versions as (
        -- Rows of the rewritten partitions whose keys this run leaves as they were.
        select previous.*
        from {{ this }} as previous
        where
            {{ in_values('previous.key_cohort', touched) }}
            and not {{ key_is_changed('previous', changed_keys_hint) }}
    ),
{%- endif %}

final as (
    select * from recomputed_versions
    {%- if is_incremental() %}
        union all
        select * from carried_versions
    {%- endif %}
)

select * from final
