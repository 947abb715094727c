{#- The tag (userMetadata, a JSON object's text) of the newest commit that changed rows, from
    [operation, userMetadata] pairs newest first; empty when no commit changed rows. Commits
    that change no row are looked through; any other commit hides the older ones, with or
    without a tag (a RESTORE, a DELETE by hand, a write by an earlier version). The same rule as
    cdc_warehouse/table_format.py's `newest_write_tag`, tied to it by
    tests/unit/test_watermarks.py. -#}
{% macro newest_write_tag(commits) -%}
    {%- set row_keeping_operations = [
        'OPTIMIZE', 'VACUUM START', 'VACUUM END', 'ADD CONSTRAINT', 'DROP CONSTRAINT',
        'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES',
    ] -%}
    {%- set state = namespace(decided=false, found='') -%}
    {%- for operation, metadata in commits -%}
        {%- if not state.decided and operation not in row_keeping_operations -%}
            {%- set state.decided = true -%}
            {%- set state.found = metadata or '' -%}
        {%- endif -%}
    {%- endfor -%}
    {{- state.found -}}
{%- endmacro %}
