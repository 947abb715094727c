{#- `query` as a temporary view named `name` (created at compile time), for a model to build a
    cached set in named steps: a cached plan that holds a CTE is never used by a query with a
    WITH clause (Spark recomputes it, SPARK-46741), so the steps of a cached set are views,
    not CTEs. Drop it when the model is done (`uncache_view`). -#}
{% macro temporary_view(name, query) -%}
    {%- if execute -%}
        {%- do run_query('create or replace temporary view ' ~ name ~ ' as ' ~ query) -%}
    {%- endif -%}
    {{ return(name) }}
{%- endmacro %}
