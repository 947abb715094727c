{#- The transactions a Debezium model may decide about in an incremental run, as SQL. Without
    `still_pending`: each transaction (int_debezium__transactions_seen: where its lines start)
    with a line landed after `processed_through`. Given `still_pending` (the pending set as of
    `processed_through`, int_debezium__pending_transactions): the transactions first seen after
    `processed_through` and those still pending; any other transaction seen by then was released
    by then, and a line of it landed since is a late event, not progress. -#}
{% macro debezium_transaction_candidates(processed_through, still_pending=none) -%}
    {%- if still_pending is none %}
        select
            seen.source_name,
            seen.transaction_key,
            seen.first_landing_run,
            seen.first_landed_at
        from {{ ref('int_debezium__transactions_seen') }} as seen
        left semi join (
            select
                source_name,
                transaction_key
            from {{ ref('int_debezium__events') }}
            where transaction_key is not null and landing_run > {{ processed_through }}
        ) as changed
            on
                seen.source_name = changed.source_name
                and seen.transaction_key = changed.transaction_key
    {%- else %}
        select
            source_name,
            transaction_key,
            first_landing_run,
            first_landed_at
        from {{ ref('int_debezium__transactions_seen') }}
        where first_landing_run > {{ processed_through }}
        union all
        select
            source_name,
            transaction_key,
            first_landing_run,
            first_landed_at
        from {{ still_pending }}
    {%- endif %}
{%- endmacro %}
