{#- Drops a table `step_table` wrote. -#}
{% macro drop_step_table(model, name) -%}
    {%- if execute -%}
        {%- do run_query('drop table if exists ' ~ model.schema ~ '.' ~ name) -%}
    {%- endif -%}
{%- endmacro %}
