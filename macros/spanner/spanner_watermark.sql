{#- A Spanner stream's partition progress and low watermark (docs/sources/spanner.md;
    docs/decisions/004), written once for the current watermark (int_spanner__partitions,
    int_spanner__watermarks) and for the watermark as of each landing run
    (int_spanner__transactions). A transaction applies only once all its records have landed
    and it is at or below its stream's low watermark: every change at or below the watermark
    has landed, from every partition that can hold one. -#}

{#- A partition's progress: the latest timestamp it reported, at least its announced start. -#}
{% macro spanner_partition_progress(reported_through_ts, announced_start_ts) -%}
    greatest(max({{ reported_through_ts }}), min({{ announced_start_ts }}))
{%- endmacro %}


{#- A stream's low watermark: the earliest progress over its open partitions; with none open,
    everything landed is complete. -#}
{% macro spanner_low_watermark(progress_ts, is_finished) -%}
    coalesce(
        min(case when not {{ is_finished }} then {{ progress_ts }} end),
        max({{ progress_ts }})
    )
{%- endmacro %}


{#- Each stream's low watermark as of each of `runs` (a relation or subquery of source_name,
    landing_run): computed from the partition reports landed by then, so a run's watermark does
    not depend on when dbt ran. -#}
{% macro spanner_watermarks_as_of_runs(runs) -%}
    select
        source_name,
        landing_run,
        {{ spanner_low_watermark('progress_ts', 'is_finished') }} as low_watermark_ts
    from (
        select
            runs.source_name,
            runs.landing_run,
            reports.partition_token,
            {{ spanner_partition_progress(
                'reports.reported_through_ts', 'reports.announced_start_ts'
            ) }} as progress_ts,
            bool_or(reports.has_finished) as is_finished
        from {{ runs }} as runs
        inner join {{ ref('int_spanner__partition_reports') }} as reports
            on
                runs.source_name = reports.source_name
                and runs.landing_run >= reports.landing_run
        group by runs.source_name, runs.landing_run, reports.partition_token
    ) as partitions_as_of_runs
    group by source_name, landing_run
{%- endmacro %}


{#- The transactions an incremental int_spanner__transactions run may release, as SQL: those
    with a record landed after `processed_through`, and those whose commit lies above the low
    watermark as of that run (one not released by then lay above the watermark at every run
    since it completed, that one included). A broadcast semi join on this set reaches the
    records scan under int_spanner__transaction_progress's aggregates. -#}
{% macro spanner_release_candidates(processed_through) -%}
    select distinct
        records.source_name,
        records.server_transaction_id
    from {{ ref('int_spanner__records') }} as records
    left join (
        {{ spanner_watermarks_as_of_runs(
            '(select distinct source_name, ' ~ processed_through ~ ' as landing_run from '
            ~ ref('int_spanner__partition_reports') ~ ' where landing_run <= '
            ~ processed_through ~ ')'
        ) }}
    ) as watermarks_then
        on records.source_name = watermarks_then.source_name
    where
        records.record_kind = 'data_change'
        and (
            records.landing_run > {{ processed_through }}
            or watermarks_then.low_watermark_ts is null
            or records.record_ts > watermarks_then.low_watermark_ts
        )
{%- endmacro %}


{#- What may be pending after an incremental int_spanner__pending_transactions run, as SQL: what
    was pending after `processed_through`, and the transactions with a record landed since.
    Everything else was released by then, or has no record. -#}
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
    from {{ this }}
    where as_of_landing_run = {{ processed_through }}
{%- endmacro %}
