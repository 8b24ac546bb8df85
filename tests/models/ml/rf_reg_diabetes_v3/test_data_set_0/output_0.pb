(ByJ =V
CD•B†`YC”¯C§­˜BWö!CÖ†>Cõi¹B'´êBp~3CÂ^CÂ£wCÈèC+Cêw?C—‚IC«&C^5CyKCeC‡ò¦BÈCM–BsŽC8«;C}»æB,ˆZCLþCï¿-Cü³£B­ÑîBª=YCê:B¨` C§}ÎBì÷sCÉÁ$C §BÊÞEC’ÖÅB