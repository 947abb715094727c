{#- Post-hook of a model that keeps one partition of `column` current: removes the older ones
    (a delete by partition column only drops files from the Delta log). -#}
{% macro drop_partitions_before_newest(relation, column) -%}
    delete from {{ relation }} where {{ column }} < {{ max_processed(relation, column) }}
{%- endmacro %}
