(ByJ 3CÁlBúa(CðITCÞVÙB¿>:CêŽ CføÌB@Ü
Cü`3C–UC
zCvceC¶ÒBC¦Ù[CýÃ^C«7'C63C›ÕVC™@$C²²…Bæ®CÔ–¤BxQ/CoŸCÂ°(C¥öOC<3NCvCw²BO`/C	aNCWB,B#2C)íõB´FC?ÈC¬rÇBýbC÷gýB