{#- The newest landing run a mart with deletion vectors has processed: the watermark its last
    MERGE recorded in its commit (record_watermark), read from the table's history, else the
    newest `column` among its rows. Delta answers max() from file statistics only for tables
    without deletion vectors, so the rows' answer is a scan of the table (docs/decisions/016).
    -#}
{% macro mart_watermark(relation, column) -%}
    {%- if not execute -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set recorded = watermark_in_commits(table_commits(relation), relation.identifier) | trim -%}
    {{ return(recorded | int if recorded else max_processed(relation, column)) }}
{%- endmacro %}
