{#- This file holds `nothing_to_merge` and `merge_source_is_empty`, the writer and the reader of
    one SQL comment: its format is their contract, so they share a file. -#}

{#- The whole query of a merging model that counted what it would merge before its query and
    found nothing (no key to recompute): an empty select of its own rows and of the `is_removed`
    flag its MERGE reads (config `merge_deletes_flagged_rows`), marked by a SQL comment. The
    MERGE is then not run at all (an empty source changes no row, and Delta makes no commit for
    it), which saves its passes over the target and the analysis of the model's own query. The
    model's watermark stays where its last commit put it, and the next run reads from there:
    nothing was there to read. A SQL comment for the reason given in
    macros/utils/merge_only_into_partitions.sql. -#}
{% macro nothing_to_merge() -%}
    -- merge source: empty
    select
        *,
        false as is_removed
    from {{ this }}
    where false
{%- endmacro %}


{% macro merge_source_is_empty(compiled_code) -%}
    {{ return('-- merge source: empty' in (compiled_code or '')) }}
{%- endmacro %}
