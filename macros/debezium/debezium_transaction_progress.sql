{#- How much of each of `candidates` (debezium_transaction_candidates, cached) has landed, as
    SQL: its END (the first, int_debezium__transaction_ends), the distinct events it counts that
    have landed, per data collection, and the landing run after which all of them had
    (completed_run; NULL while its END or some event is missing). An event delivered twice
    counts once (its collection and data_collection_order name it). Reads the events and ENDs of
    landing runs from `from_run` on. Without `carried`, the candidates' lines all start there.
    With it (the pending set as of the run before `from_run`, which keeps what had landed of each
    transaction: arrived_events, its END, committed_at), a pending transaction's earlier lines
    are taken from there, so a transaction that waits long costs no read of the runs since it
    began. `hint` joins the candidates by broadcast. -#}
{% macro debezium_transaction_progress(candidates, from_run, hint='', carried=none) -%}
    with candidate_lines as (
        select {{ hint }}
            events.source_name,
            events.transaction_key,
            events.source_table,
            events.op,
            events.data_collection_order,
            events.committed_at,
            events.landing_run
        from {{ ref('int_debezium__events') }} as events
        left semi join {{ candidates }} as candidates
            on
                events.source_name = candidates.source_name
                and events.transaction_key = candidates.transaction_key
        where
            events.transaction_key is not null
            and events.error is null
            and events.landing_run >= {{ from_run }}
    ),

    landed_changes as (
        select
            source_name,
            transaction_key,
            source_table,
            data_collection_order,
            landing_run
        from candidate_lines
        where op is not null
    {%- if carried is not none %}
            union all
            select
                carried.source_name,
                carried.transaction_key,
                arrived.source_table,
                arrived.data_collection_order,
                arrived.arrival_run as landing_run
            from {{ carried }} as carried
                lateral view inline(carried.arrived_events) arrived
    {%- endif %}
    ),

    event_arrivals as (
        -- Each change event once, in the run it first landed.
        select
            source_name,
            transaction_key,
            source_table,
            data_collection_order,
            min(landing_run) as arrival_run
        from landed_changes
        group by source_name, transaction_key, source_table, data_collection_order
    ),

    transaction_lines as (
        -- The newest time its lines give (events, BEGIN, END): the commit, as far as landed.
        select
            source_name,
            transaction_key,
            max(committed_at) as committed_at
        from (
            select
                source_name,
                transaction_key,
                committed_at
            from candidate_lines
    {%- if carried is not none %}
                union all
                select
                    source_name,
                    transaction_key,
                    committed_at
                from {{ carried }}
    {%- endif %}
        )
        group by source_name, transaction_key
    ),

    landed_events as (
        select
            source_name,
            transaction_key,
            count(*) as landed_events,
            collect_list(
                named_struct(
                    'source_table', source_table,
                    'data_collection_order', data_collection_order,
                    'arrival_run', arrival_run
                )
            ) as arrived_events
        from event_arrivals
        group by source_name, transaction_key
    ),

    ends as (
        select {{ hint }}
            ends.source_name,
            ends.transaction_key,
            ends.event_count,
            ends.data_collections,
            ends.landing_run
        from {{ ref('int_debezium__transaction_ends') }} as ends
        left semi join {{ candidates }} as candidates
            on
                ends.source_name = candidates.source_name
                and ends.transaction_key = candidates.transaction_key
        where ends.error is null and ends.landing_run >= {{ from_run }}
    {%- if carried is not none %}
            union all
            select
                source_name,
                transaction_key,
                event_count,
                data_collections,
                end_landing_run as landing_run
            from {{ carried }}
            where end_landing_run is not null
    {%- endif %}
    ),

    counted_collections as (
        select
            ends.source_name,
            ends.transaction_key,
            counted.data_collection,
            counted.event_count
        from ends
            lateral view explode(ends.data_collections) counted as data_collection, event_count
    ),

    counted_arrivals as (
        -- The events the END counts in a collection are its orders 1 to the count; the count-th
        -- of them to arrive completes the collection.
        select
            counted_collections.*,
            event_arrivals.arrival_run,
            row_number() over (
                partition by
                    counted_collections.source_name,
                    counted_collections.transaction_key,
                    counted_collections.data_collection
                order by event_arrivals.arrival_run, event_arrivals.data_collection_order
            ) as arrival_number
        from counted_collections
        left join event_arrivals
            on
                counted_collections.source_name = event_arrivals.source_name
                and counted_collections.transaction_key = event_arrivals.transaction_key
                and counted_collections.data_collection = event_arrivals.source_table
                and event_arrivals.data_collection_order <= counted_collections.event_count
    ),

    collection_progress as (
        select
            source_name,
            transaction_key,
            data_collection,
            event_count,
            count(arrival_run) as counted_events,
            max(case when arrival_number = event_count then arrival_run end) as completed_run
        from counted_arrivals
        group by source_name, transaction_key, data_collection, event_count
    ),

    counted_progress as (
        select
            source_name,
            transaction_key,
            sum(event_count - counted_events) as missing_events,
            max(completed_run) as completed_run
        from collection_progress
        group by source_name, transaction_key
    )

    select
        candidates.source_name,
        candidates.transaction_key,
        candidates.first_landing_run,
        candidates.first_landed_at,
        transaction_lines.committed_at,
        coalesce(landed_events.landed_events, 0) as landed_events,
        ends.event_count,
        case when ends.landing_run is not null
            then coalesce(counted_progress.missing_events, 0)
        end as missing_events,
        -- Complete once the END and every event it counts have landed; an empty transaction
        -- with its END.
        case when coalesce(counted_progress.missing_events, 0) = 0
            then greatest(ends.landing_run, counted_progress.completed_run)
        end as completed_run,
        -- What a pending set keeps of it, for the next run (`carried`).
        landed_events.arrived_events,
        ends.data_collections,
        ends.landing_run as end_landing_run
    from {{ candidates }} as candidates
    left join ends
        on
            candidates.source_name = ends.source_name
            and candidates.transaction_key = ends.transaction_key
    left join counted_progress
        on
            candidates.source_name = counted_progress.source_name
            and candidates.transaction_key = counted_progress.transaction_key
    left join transaction_lines
        on
            candidates.source_name = transaction_lines.source_name
            and candidates.transaction_key = transaction_lines.transaction_key
    left join landed_events
        on
            candidates.source_name = landed_events.source_name
            and candidates.transaction_key = landed_events.transaction_key
{%- endmacro %}
