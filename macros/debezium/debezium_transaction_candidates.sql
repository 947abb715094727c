{#- The transactions a Debezium model may decide about in an incremental run, as SQL: each
    transaction (int_debezium__transactions_seen: where its lines start) with a line landed after
    `processed_through`, and, given `still_pending` (a relation of source_name, transaction_key),
    those too. Any other transaction's progress is what it was. -#}
{% macro debezium_transaction_candidates(processed_through, still_pending=none) -%}
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
    {% if still_pending is not none -%}
            union
            select
                source_name,
                transaction_key
            from {{ still_pending }}
    {%- endif %}
    ) as changed
        on
            seen.source_name = changed.source_name
            and seen.transaction_key = changed.transaction_key
{%- endmacro %}
