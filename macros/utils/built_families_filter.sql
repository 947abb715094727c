{#- A condition on `column` (a family name, `source_system`) that holds for the families this
    build processes (families_in_build), `true` when it processes all. On the view that unions
    every family's changes (int_cdc__source_changes) the column is each branch's constant, so
    Spark drops the other families' branches and never reads their tables. -#}
{% macro built_families_filter(column) -%}
    {%- set in_build = families_in_build() -%}
    {%- if in_build is none -%}
        {{ return('true') }}
    {%- endif -%}
    {{ return(column ~ " in ('" ~ in_build | join("', '") ~ "')") }}
{%- endmacro %}
