{#- The select list of a change-log row in change_log_columns' order: `relation.column`, or
    `expression as column` where `expressions` gives the column's value; one column a line,
    the lines after the first indented by `indent` spaces. Every branch of a union of
    change-log rows selects through this, so the branches line up by name. -#}
{% macro change_log_select(relation, expressions={}, stored=false, indent=8) -%}
    {%- set columns = change_log_columns(stored).split(',') -%}
    {%- for name in expressions if name not in columns -%}
        {{ exceptions.raise_compiler_error(
            'change_log_select: ' ~ name ~ ' is not a change-log column'
        ) }}
    {%- endfor -%}
    {%- for name in columns -%}
        {{ expressions[name] ~ ' as ' ~ name if name in expressions else relation ~ '.' ~ name }}
        {{- ',\n' ~ ' ' * indent if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
