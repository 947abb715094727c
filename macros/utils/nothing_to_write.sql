{#- This file holds `nothing_to_write` and `marked_nothing_to_write`, the writer and the reader of
    one SQL comment: its format is their contract, so they share a file. -#}

{#- The whole query of an incremental model that counted what it would write before its query
    and found nothing (a mart with no key to recompute, key successions with no new change): an
    empty select of its own rows, and with `flags_removed_rows` of the `is_removed` flag its
    MERGE reads (config `merge_deletes_flagged_rows`), marked by a SQL comment. Its MERGE or
    insert is then not run at all (an empty source changes no row, and Delta makes no commit for
    it), which saves the passes over the target and the analysis of the model's own query. The
    model's watermark stays where its last commit put it, and the next run reads from there:
    nothing was there to read. A SQL comment for the reason given in
    macros/utils/merge_only_into_partitions.sql. -#}
{% macro nothing_to_write(flags_removed_rows=false) -%}
    -- incremental source: empty
    select
        *{{ ', false as is_removed' if flags_removed_rows }}
    from {{ this }}
    where false
{%- endmacro %}


{% macro marked_nothing_to_write(compiled_code) -%}
    {{ return('-- incremental source: empty' in (compiled_code or '')) }}
{%- endmacro %}
