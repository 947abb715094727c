{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_cohort'],
    )
}}

{#- A run recomputes whole key partitions from the change log: a late event takes its place in
    its key's history, and the model never reads the table it overwrites. -#}
{%- set touched = touched_cohorts(ref('int_cdc__change_log'), 'landing_run') if is_incremental() %}

with changes as (
    select * from {{ ref('int_cdc__change_log') }}
    {%- if is_incremental() %}
        where {{ in_values('key_cohort', touched) }}
    {%- endif %}
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

transaction_ends as (
    -- Consecutive changes of a key inside one transaction make one version: its last change.
    select
        *,
        lead(txn_id) over (
            partition by source_system, source_name, source_table, key_json
            order by sort_key
        ) as next_txn_id
    from sorted_changes
),

transitions as (
    select
        *,
        case
            when op != 'delete' then {{ row_json_from_image('row_image') }}
        end as row_json,
        case
            when op != 'delete' then {{ unavailable_columns_of_image('row_image') }}
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

final as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        row_json,
        unavailable_columns,
        op,
        effective_at as valid_from,
        valid_to,
        is_current,
        closed_by_delete,
        sort_key,
        committed_at,
        last_landing_run,
        key_cohort
    from versions
    where op != 'delete'
)

select * from final
