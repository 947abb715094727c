{#- The watermark that the newest commit changing rows recorded for `table` (a mart's name),
    from [operation, userMetadata] pairs newest first (`newest_write_tag`); empty when it
    recorded none. The same rule as cdc_warehouse/table_format.py's `watermark_in_commits`, tied
    to it by tests/unit/test_watermarks.py. -#}
{% macro watermark_in_commits(commits, table) -%}
    {%- set tag = fromjson(newest_write_tag(commits) | trim or '{}', {}) -%}
    {%- set mark = tag.get('watermark') if tag is mapping else none -%}
    {%- if mark is mapping and mark.get('table') == table and mark.get('landing_run') is integer -%}
        {{- mark.get('landing_run') -}}
    {%- endif -%}
{%- endmacro %}
