{#- The transactions an incremental int_spanner__transactions run may release, as SQL: those
    with a record (or a snapshot batch) landed after `processed_through`, and those whose commit
    lies above the low watermark as of that run (one not released by then lay above the
    watermark at every run since it completed, that one included). A broadcast semi join on
    this set reaches the records scan under int_spanner__transaction_progress's aggregates. -#}
{% macro spanner_release_candidates(processed_through) -%}
    select distinct
        records.source_name,
        records.server_transaction_id
    from (
        select source_name, server_transaction_id, landing_run, record_ts
        from {{ ref('int_spanner__records') }}
        where record_kind = 'data_change'
        union all
        select source_name, server_transaction_id, landing_run, commit_ts as record_ts
        from {{ ref('int_spanner__snapshot_batches') }}
    ) as records
    left join (
        {{ spanner_watermarks_as_of_runs(
            '(select distinct source_name, ' ~ processed_through ~ ' as landing_run from '
            ~ ref('int_spanner__partition_reports') ~ ' where landing_run <= '
            ~ processed_through ~ ')'
        ) }}
    ) as watermarks_then
        on records.source_name = watermarks_then.source_name
    where
        records.landing_run > {{ processed_through }}
        or watermarks_then.low_watermark_ts is null
        or records.record_ts > watermarks_then.low_watermark_ts
{%- endmacro %}
