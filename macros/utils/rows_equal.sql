{#- Whether the rows aliased `left` and `right` hold the same values in `columns`, a NULL
    equal to a NULL: what the marts compare before they merge a row, and the MERGE when a model
    has not compared. -#}
{% macro rows_equal(left, right, columns) -%}
    {%- set equal = [] -%}
    {%- for column in columns -%}
        {%- do equal.append(left ~ '.' ~ column ~ ' <=> ' ~ right ~ '.' ~ column) -%}
    {%- endfor -%}
    {{ return(equal | join(' and ')) }}
{%- endmacro %}
