"""The run service: admission and queueing (``service``), who may use the bot where (``access``), a request's
attachments (``attachments``), driving one run to its sinks (``runner``) and its usage and cost (``usage``)."""
