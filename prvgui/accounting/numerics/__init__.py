"""The composition numerics: from the rows' PRVs to a certified privacy profile.

``discretize`` puts a PRV on a mesh (mass moved so that the bounds stay certified); ``window``
chooses where the composed loss lives; ``band`` and ``compose`` compose on the FFT (or the
band-limited) path; ``tilt`` composes tilted towards a far tail; ``profile`` turns a
composition into certified delta(eps) bounds; ``pipeline`` chains them at an error level;
``reuse`` keeps each row's discretisation between queries; ``sweep`` composes many counts of
one row at once; ``pricing`` prices all of it before it runs. May import: ``pairs``, ``core``
(never the kinds: the numerics see PRVs only)."""
