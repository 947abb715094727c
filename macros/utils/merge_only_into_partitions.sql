{#- This file holds `merge_only_into_partitions` and `merged_target_partitions`, the writer
    and the reader of one SQL comment: its format is their contract, so they share a file. -#}

{#- Names, in a merging model's SQL, the only values `column` takes in the target rows that its
    MERGE may match or delete: every row the model returns lies in them. The MERGE then reads
    only those partitions of the target; Delta prunes no file by the join with the source. A
    SQL comment, because a model's compile-time results reach the materialization only through
    its compiled code: in dbt 1.11 `config.set` does nothing once a model runs, the `model` a
    macro sees is a copy of the node made for each render, and `incremental_predicates` is
    config, fixed when dbt parses the project, before any query has run.
    `merged_target_partitions` reads it back. -#}
{% macro merge_only_into_partitions(column, values) -%}
    {%- if values | length > 0 -%}
        -- merge target partitions: target.{{ column }} in ({{ values | join(", ") }})
    {%- endif -%}
{%- endmacro %}


{% macro merged_target_partitions(compiled_code) -%}
    {%- set named = modules.re.search(
        "-- merge target partitions: (target\\.\\w+ in \\([0-9, ]+\\))", compiled_code or ""
    ) -%}
    {{ return([named.group(1)] if named else []) }}
{%- endmacro %}
