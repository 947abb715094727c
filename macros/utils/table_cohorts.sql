{#- Keeps the partitions holding one source table's keys: Spark prunes every other table's
    files by this predicate on the partition column alone (docs/decisions/017). `source` names
    source_system and source_table, as a typed model's meta.cdc_source does. -#}
{% macro table_cohorts(source, cohort_column='key_cohort') -%}
    {{ cohort_column }} div {{ cohorts_per_table() }} = {{ table_bucket(
        "'" ~ source.source_system ~ "'", "'" ~ source.source_table ~ "'"
    ) }}
{%- endmacro %}
