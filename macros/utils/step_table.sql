{#- `query` written as a parquet table `name` in the schema of `model` (at compile time), for a
    model whose next statements read a result of a long plan: a view or a cached view of it
    carries the whole plan into each statement that reads it (analysed, and for a MERGE
    optimised, again each time), a table carries a file scan. Drop it when the model is done
    (`drop_step_table`). -#}
{% macro step_table(model, name, query) -%}
    {%- set relation = model.schema ~ '.' ~ name -%}
    {%- if execute -%}
        {%- do run_query('drop table if exists ' ~ relation) -%}
        {%- do run_query('create table ' ~ relation ~ ' using parquet as ' ~ query) -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}
