{#- The decoding UDFs cost Python time per line, and the lines of one family's sources differ in
    cost: a scan packed into one task per core leaves a core idle behind the costlier task.
    A model that feeds a UDF straight from its scan splits that scan finer for its own statements
    (set before, reset after); other models keep Spark's default splits, which suit plain SQL.
    -#}
{% macro finer_scan_splits() -%}
    set spark.sql.files.minPartitionNum = {{ var('cdc_decoding_scan_tasks') }}
{%- endmacro %}
