// Site-wide behaviour. Served as a file: the Content-Security-Policy allows no inline script.
"use strict";
