{#- A family's snapshot rows: the further lines of new snapshot files, each decoded by
    `row_call`, the family's row stage, with its file's header (`headers`, one row per file, so a
    run reads its new lines and that small state), into the change-log fields
    (docs/decisions/001) or an error. committed_at, epoch microseconds from the UDF, becomes a
    timestamp. -#}
{% macro snapshot_rows(lines, headers, family, row_call) -%}
    {%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
    {%- set fields = change_fields().split(',') | reject('equalto', 'committed_at') | list %}

with new_row_lines as (
    select * from {{ lines }}
    where
        landing_run > {{ processed_through }}
        and line_number > 1
        and {{ is_snapshot_file(family) }}
),

headers as (
    select
        source_name,
        file_path,
        header_json
    from {{ headers }}
),

decoded_rows as (
    select
        new_row_lines.*,
        {{ row_call }} as snapshot_row
    from new_row_lines
    left join headers
        on
            new_row_lines.source_name = headers.source_name
            and new_row_lines.file_path = headers.file_path
),

final as (
    select
        source_name,
        file_path,
        line_number,
    {%- for field in fields %}
        snapshot_row.{{ field }},
    {%- endfor %}
        landed_at,
        landing_run,
        timestamp_micros(snapshot_row.committed_at) as committed_at,
        coalesce(load_error, snapshot_row.error) as error,
        case when load_error is not null or snapshot_row.error is not null then line end as raw_line
    from decoded_rows
)

select * from final
{%- endmacro %}
