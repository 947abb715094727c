{#- A family's snapshot file headers (python_udfs/snapshots.py): the first line of each new
    snapshot file decoded by `header_call`, the family's header stage, with `extra_fields` of
    its row beside the shared ones. One row per file, so a row landed in a later run finds its
    file's header here, not in the lines. A header that does not fit is quarantined, and with no
    header_json every row of its file is too. -#}
{% macro snapshot_headers(lines, family, header_call, extra_fields=[]) -%}
    {%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with new_first_lines as (
    select * from {{ lines }}
    where
        landing_run > {{ processed_through }}
        and line_number = 1
        and {{ is_snapshot_file(family) }}
),

decoded_headers as (
    select
        *,
        {{ header_call }} as header
    from new_first_lines
),

final as (
    select
        source_name,
        file_path,
        line_number,
        header.source_table,
        -- A line made valid UTF-8 is quarantined: its file has no header to read rows by.
        case when load_error is null then header.header_json end as header_json,
        header.column_types,
    {%- for field in extra_fields %}
        header.{{ field }},
    {%- endfor %}
        landed_at,
        landing_run,
        coalesce(load_error, header.error) as error,
        case when load_error is not null or header.error is not null then line end as raw_line
    from decoded_headers
)

select * from final
{%- endmacro %}
