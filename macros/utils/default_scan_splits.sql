{#- Gives a decoding model's scan back Spark's default splits after its statements: the
    other half of `finer_scan_splits`. -#}
{% macro default_scan_splits() -%}
    reset spark.sql.files.minPartitionNum
{%- endmacro %}
