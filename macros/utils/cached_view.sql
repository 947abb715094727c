{#- The result of `query` as a cached temporary view: a set that a model reads several times,
    at compile time too, is computed once. `storage_level` is Spark's (DISK_ONLY for sets as
    large as the input). Spark keeps all the shuffle partitions of a cached result, so a small
    one would be read by as many near-empty tasks per scan; `coalesce_output` lets adaptive
    execution merge them; a set as large as the input keeps its full-sized partitions
    (docs/decisions/007). The setting that lets it,
    spark.sql.optimizer.canChangeCachedPlanOutputPartitioning, counts when Spark caches the
    query: it is set for the cache statement alone, then given back its previous value. Drop the
    view when the model is done (`uncache_view`). -#}
{% macro cached_view(name, query, storage_level='MEMORY_AND_DISK', coalesce_output=true) -%}
    {%- if execute -%}
        {%- do uncache_view(name) -%}
        {%- set setting = 'spark.sql.optimizer.canChangeCachedPlanOutputPartitioning' -%}
        {%- set previous = run_query('set ' ~ setting).rows[0][1] -%}
        {%- do run_query('set ' ~ setting ~ '=' ~ (coalesce_output | string | lower)) -%}
        {%- do run_query(
            "cache table " ~ name ~ " options ('storageLevel' '" ~ storage_level ~ "') as "
            ~ query
        ) -%}
        {%- do run_query('set ' ~ setting ~ '=' ~ previous) -%}
    {%- endif -%}
    {{ return(name) }}
{%- endmacro %}
