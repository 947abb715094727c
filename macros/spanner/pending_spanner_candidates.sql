{#- What may be pending after an incremental int_spanner__pending_transactions run, as SQL: what
    was pending after `processed_through`, and the transactions with a record (or the snapshot
    batches) landed since. Everything else was released by then, or has no record. -#}
{% macro pending_spanner_candidates(processed_through) -%}
    select
        source_name,
        server_transaction_id
    from {{ ref('int_spanner__records') }}
    where record_kind = 'data_change' and landing_run > {{ processed_through }}
    union
    select
        source_name,
        server_transaction_id
    from {{ ref('int_spanner__snapshot_batches') }}
    where landing_run > {{ processed_through }}
    union
    select
        source_name,
        server_transaction_id
    from {{ this }}
    where as_of_landing_run = {{ processed_through }}
{%- endmacro %}
