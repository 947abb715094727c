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
