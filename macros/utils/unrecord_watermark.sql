{#- The commits this model makes from now on record no watermark: a mart's last post-hook,
    after the commit `record_watermark` tagged (docs/decisions/016). -#}
{% macro unrecord_watermark() -%}
    {%- do set_commit_watermark(none) -%}
{%- endmacro %}
