{#- The columns a typed model takes from its state relation (`current` or `history`), not from
    the source row, comma-separated: text renders alike in dbt and in sqlfluff's templater,
    which would render a returned list as text. -#}
{% macro typed_system_columns(state) -%}
    {%- set state_columns = {
        'current': ['last_op', 'last_committed_at'],
        'history': ['op', 'valid_from', 'valid_to', 'is_current'],
    }[state] -%}
    {{- (['source_name', 'key_json', 'row_json', 'unavailable_columns'] + state_columns
        + ['last_landing_run']) | join(',') -}}
{%- endmacro %}
