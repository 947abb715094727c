{#- A family's bad lines for cdc_quarantine. -#}
{% macro rejected_lines(events, source_system, processed_through) -%}
    select
        '{{ source_system }}' as source_system,
        source_name,
        file_path,
        line_number,
        error as reason,
        raw_line,
        landed_at,
        landing_run
    from {{ events }}
    where error is not null and landing_run > {{ processed_through }}
{%- endmacro %}
