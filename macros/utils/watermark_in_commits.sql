{#- The watermark that the newest commit changing rows recorded for `table` (a mart's name),
    from [operation, userMetadata] pairs newest first; empty when it recorded none. Commits that
    change no row are looked through; any other commit without one (a RESTORE, a DELETE by
    hand, a write by an earlier version) hides the older ones. The same rule as
    cdc_warehouse/table_format.py's `watermark_in_commits`, tied to it by
    tests/unit/test_watermarks.py. -#}
{% macro watermark_in_commits(commits, table) -%}
    {%- set row_keeping_operations = [
        'OPTIMIZE', 'VACUUM START', 'VACUUM END', 'ADD CONSTRAINT', 'DROP CONSTRAINT',
        'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES',
    ] -%}
    {%- set state = namespace(decided=false, found='') -%}
    {%- for operation, metadata in commits -%}
        {%- if not state.decided and operation not in row_keeping_operations -%}
            {%- set state.decided = true -%}
            {%- set tag = fromjson(metadata or '{}', {}) -%}
            {%- set mark = tag.get('watermark') if tag is mapping else none -%}
            {%- if mark is mapping and mark.get('table') == table
                and mark.get('landing_run') is integer -%}
                {%- set state.found = mark.get('landing_run') -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{- state.found -}}
{%- endmacro %}
